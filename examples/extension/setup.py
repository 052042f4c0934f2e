"""Ahead-of-time build of the example extension: python setup.py build_ext --inplace (README.md in this folder)."""
from setuptools import setup

from pyctorch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="fused_bias_gelu_ext",
    ext_modules=[CppExtension("fused_bias_gelu_ext", ["fused_bias_gelu.c"], extra_compile_args=["-Wall", "-Wextra"])],
    cmdclass={"build_ext": BuildExtension},
)
