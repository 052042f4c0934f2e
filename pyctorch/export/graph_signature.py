"""torch.export.graph_signature: what each placeholder and output of an exported graph stands for."""
from dataclasses import dataclass
from enum import Enum, auto
from typing import Optional, Union

__all__ = ["InputKind", "OutputKind", "InputSpec", "OutputSpec", "TensorArgument", "ConstantArgument",
           "SymIntArgument", "ExportGraphSignature"]


class InputKind(Enum):
    USER_INPUT = auto()
    PARAMETER = auto()
    BUFFER = auto()
    CONSTANT_TENSOR = auto()
    CUSTOM_OBJ = auto()
    TOKEN = auto()


class OutputKind(Enum):
    USER_OUTPUT = auto()
    LOSS_OUTPUT = auto()
    BUFFER_MUTATION = auto()
    PARAMETER_MUTATION = auto()
    GRADIENT_TO_PARAMETER = auto()
    GRADIENT_TO_USER_INPUT = auto()
    USER_INPUT_MUTATION = auto()
    TOKEN = auto()


@dataclass
class TensorArgument:
    name: str


@dataclass
class SymIntArgument:
    name: str


@dataclass
class ConstantArgument:
    name: str
    value: Union[int, float, bool, str, None]


@dataclass
class InputSpec:
    kind: InputKind
    arg: Union[TensorArgument, SymIntArgument, ConstantArgument]
    target: Optional[str]
    persistent: Optional[bool] = None

    def __str__(self):
        target = "" if self.target is None else f" target='{self.target}'"
        persistent = "" if self.persistent is None else f" persistent={self.persistent}"
        return f"{self.arg.name}: {self.kind.name}{target}{persistent}"


@dataclass
class OutputSpec:
    kind: OutputKind
    arg: Union[TensorArgument, SymIntArgument, ConstantArgument]
    target: Optional[str]

    def __str__(self):
        target = "" if self.target is None else f" target='{self.target}'"
        return f"{self.arg.name}: {self.kind.name}{target}"


@dataclass
class ExportGraphSignature:
    input_specs: list
    output_specs: list

    def _names(self, kind):
        return [s.arg.name for s in self.input_specs if s.kind == kind]

    @property
    def parameters(self):
        return tuple([s.target for s in self.input_specs if s.kind == InputKind.PARAMETER])

    @property
    def buffers(self):
        return tuple([s.target for s in self.input_specs if s.kind == InputKind.BUFFER])

    @property
    def non_persistent_buffers(self):
        return tuple([s.target for s in self.input_specs if s.kind == InputKind.BUFFER and s.persistent is False])

    @property
    def lifted_tensor_constants(self):
        return tuple([s.target for s in self.input_specs if s.kind == InputKind.CONSTANT_TENSOR])

    @property
    def user_inputs(self):
        return tuple([s.arg.name if not isinstance(s.arg, ConstantArgument) else s.arg.value
                for s in self.input_specs if s.kind == InputKind.USER_INPUT])

    @property
    def user_outputs(self):
        return tuple([s.arg.name if not isinstance(s.arg, ConstantArgument) else s.arg.value
                for s in self.output_specs if s.kind == OutputKind.USER_OUTPUT])

    @property
    def inputs_to_parameters(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == InputKind.PARAMETER}

    @property
    def inputs_to_buffers(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == InputKind.BUFFER}

    @property
    def inputs_to_lifted_tensor_constants(self):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == InputKind.CONSTANT_TENSOR}

    @property
    def buffers_to_mutate(self):
        return {}  # pyctorch's graphs keep in-place ops (Note [Export capture]): no mutation outputs

    @property
    def user_inputs_to_mutate(self):
        return {}

    def __str__(self):
        lines = ["", "# inputs"] + [str(s) for s in self.input_specs] + ["", "# outputs"] + \
            [str(s) for s in self.output_specs]
        return "\n".join(lines) + "\n"
