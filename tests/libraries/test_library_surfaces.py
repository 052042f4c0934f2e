"""The torch APIs that libraries built on torch import (found running transformers): each against torch
where torch has it on the CPU, else against what torch documents."""
import pytest

import pyctorch
from conftest import CUDA_BUILT, CUDA_USABLE, cuda_refusal, requires_torch, torch


# ---- torch.utils._pytree: the named flatten helpers (transformers registers ModelOutput with
# flatten_with_keys_fn=_dict_flatten_with_keys) ----

@requires_torch
def test_pytree_named_helpers_match_torch():
    import collections
    import pyctorch.utils._pytree as pp
    import torch.utils._pytree as tp
    d = {"a": 1, "b": 2}
    keys, ctx = pp._dict_flatten_with_keys(d)
    tkeys, tctx = tp._dict_flatten_with_keys(d)
    assert [(k.key, v) for k, v in keys] == [(k.key, v) for k, v in tkeys] and ctx == tctx
    assert [(k.idx, v) for k, v in pp._list_flatten_with_keys([5, 6])[0]] == [(0, 5), (1, 6)]
    assert [(k.idx, v) for k, v in pp._tuple_flatten_with_keys((5, 6))[0]] == [(0, 5), (1, 6)]
    for name in ("_tuple_unflatten", "_list_unflatten", "_dict_unflatten", "_ordereddict_unflatten",
                 "_deque_unflatten", "_defaultdict_unflatten", "_namedtuple_unflatten"):
        assert hasattr(pp, name), name
    dq = collections.deque([1, 2], maxlen=3)
    assert pp._deque_unflatten(*pp._deque_flatten(dq)) == dq and pp._deque_flatten(dq)[1] == 3
    dd = collections.defaultdict(list, {"x": 1})
    back = pp._defaultdict_unflatten(*pp._defaultdict_flatten(dd))
    assert back == dd and back.default_factory is list
    od = collections.OrderedDict(b=1, a=2)
    assert pp._ordereddict_unflatten(*pp._ordereddict_flatten(od)) == od


def test_pytree_register_with_dict_flatten_with_keys():
    import pyctorch.utils._pytree as pp

    class Out(dict):
        pass
    pp.register_pytree_node(Out, pp._dict_flatten, lambda v, c: Out(zip(c, v)),
                            serialized_type_name="test.Out", flatten_with_keys_fn=pp._dict_flatten_with_keys)
    leaves, spec = pp.tree_flatten(Out(x=1, y=2))
    assert leaves == [1, 2] and pp.tree_unflatten(leaves, spec) == Out(x=1, y=2)
    paths = [p for p, _ in pp.tree_flatten_with_path(Out(x=1, y=2))[0]]
    assert [p[0].key for p in paths] == ["x", "y"]


# ---- bare @no_grad / @enable_grad (transformers' core_model_loading decorates with `@torch.no_grad`) ----

def test_bare_no_grad_and_enable_grad_decorators():
    @pyctorch.no_grad
    def f(x):
        return x * 2

    @pyctorch.enable_grad
    def g(x):
        return x * 2
    x = pyctorch.ones(2, requires_grad=True)
    assert not f(x).requires_grad and f.__name__ == "f"
    with pyctorch.no_grad():
        assert g(x).requires_grad
    with pyctorch.no_grad() as ctx:  # the context-manager form is unchanged
        assert ctx is None and not (x * 2).requires_grad


# ---- torch.library custom ops (transformers' moe registers transformers::grouped_mm_fallback) ----

def test_custom_op_with_autograd_and_ops_namespace():
    import pyctorch.library as library

    def mul(x: pyctorch.Tensor, w: pyctorch.Tensor) -> pyctorch.Tensor:
        return x * w
    op = library.custom_op("pct_test::mul", mul, mutates_args=())
    library.register_fake("pct_test::mul", lambda x, w: pyctorch.empty_like(x))

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad * w, grad * x
    library.register_autograd("pct_test::mul", backward, setup_context=setup_context)
    x = pyctorch.tensor([1.0, 2.0], requires_grad=True)
    w = pyctorch.tensor([3.0, 4.0], requires_grad=True)
    y = pyctorch.ops.pct_test.mul(x, w)
    y.sum().backward()
    assert y.tolist() == [3.0, 8.0] and x.grad.tolist() == [3.0, 4.0] and w.grad.tolist() == [1.0, 2.0]
    assert op(x, w).tolist() == [3.0, 8.0]
    assert str(pyctorch.ops.pct_test.mul.default._schema) == "pct_test::mul(Tensor x, Tensor w) -> Tensor"


def test_custom_op_decorator_schema_and_missing_backward():
    import pyctorch.library as library

    @library.custom_op("pct_test::twice", mutates_args=(), schema="(Tensor x) -> Tensor")
    def twice(x):
        return x * 2
    x = pyctorch.ones(2, requires_grad=True)
    y = twice(x)
    assert y.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="Autograd has not been implemented for operator pct_test::twice"):
        y.sum().backward()
    with pyctorch.no_grad():
        assert not twice(x).requires_grad
    with pytest.raises(AttributeError):
        pyctorch.ops.pct_test.not_registered


# ---- torch.accelerator, torch.cuda's CPU-build dummies ----

@requires_torch
def test_accelerator_matches_cpu_torch():
    import pyctorch.accelerator as pa
    assert pa.is_available() == torch.accelerator.is_available()
    assert pa.current_accelerator() == torch.accelerator.current_accelerator() is None
    assert pa.device_count() == torch.accelerator.device_count() == 0
    for name in ("current_device_index", "synchronize", "empty_cache", "memory_allocated"):
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch.accelerator, name)()
        with pytest.raises(RuntimeError, match=str(theirs.value)):
            getattr(pa, name)()
    with pa.device_index(None):
        pass


@requires_torch
def test_cuda_dummies_match_cpu_torch():
    if CUDA_BUILT:  # torch.cuda's classes are real ones here; without a device they refuse as torch's CUDA build does
        if not CUDA_USABLE:
            refusal, message = cuda_refusal()
            with pytest.raises(refusal, match=message):
                pyctorch.cuda.Stream()
        with pyctorch.cuda.StreamContext(None):
            pass
        return
    for name in ("CUDAGraph", "Event", "Stream"):
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch.cuda, name)()
        with pytest.raises(RuntimeError, match=str(theirs.value)):
            getattr(pyctorch.cuda, name)()
        assert isinstance(getattr(pyctorch.cuda, name), type)
    with pyctorch.cuda.StreamContext(None):
        pass
    with pytest.raises(RuntimeError, match="requires CUDA support"):
        pyctorch.cuda.graph(None)
    with pytest.raises(RuntimeError, match="_graph_pool_handle"):
        pyctorch.cuda.graph_pool_handle()


# ---- torch.nn.attention ----

@requires_torch
def test_sdpa_backends_and_flex_names():
    from pyctorch.nn.attention import SDPBackend, sdpa_kernel, _cur_sdpa_kernel_backends
    from pyctorch.nn.attention import flex_attention as fa
    assert {m.name: m.value for m in SDPBackend} == \
        {name: m.value for name, m in torch.nn.attention.SDPBackend.__members__.items()}
    q = pyctorch.randn(1, 2, 4, 8)
    ref = pyctorch.nn.functional.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.MATH):
        assert _cur_sdpa_kernel_backends() == [SDPBackend.MATH]
        assert (pyctorch.nn.functional.scaled_dot_product_attention(q, q, q) == ref).all()
    assert SDPBackend.FLASH_ATTENTION in _cur_sdpa_kernel_backends()
    assert pyctorch.nn.attention.__name__ == "pyctorch.nn.attention"  # not nn.modules.attention
    import torch.nn.attention.flex_attention as tfa
    assert fa._DEFAULT_SPARSE_BLOCK_SIZE == tfa._DEFAULT_SPARSE_BLOCK_SIZE
    assert fa.AuxRequest(lse=True) == (True, False)
    qi, ki = pyctorch.arange(4).view(4, 1), pyctorch.arange(4).view(1, 4)
    tq, tk = torch.arange(4).view(4, 1), torch.arange(4).view(1, 4)
    zero, tzero = pyctorch.tensor(0), torch.tensor(0)
    for ours, theirs in ((fa.and_masks(lambda b, h, q, k: q >= k, lambda b, h, q, k: q - k < 2),
                          tfa.and_masks(lambda b, h, q, k: q >= k, lambda b, h, q, k: q - k < 2)),
                         (fa.or_masks(lambda b, h, q, k: q == k, lambda b, h, q, k: k == 0),
                          tfa.or_masks(lambda b, h, q, k: q == k, lambda b, h, q, k: k == 0)),
                         (fa.noop_mask, tfa.noop_mask)):
        assert ours(zero, zero, qi, ki).tolist() == theirs(tzero, tzero, tq, tk).tolist()
    assert not isinstance(q, fa.BlockMask)
    with pytest.raises(NotImplementedError, match="flex_attention"):
        fa.flex_attention(q, q, q)
    with pytest.raises(NotImplementedError, match="create_block_mask"):
        fa.create_block_mask(None, 1, 1, 4, 4)


# ---- torch._dynamo._trace_wrapped_higher_order_op ----

def test_transform_getitem_to_index_under_vmap():
    """transformers' vmapped mask functions: y[a, b] with batched 0-d index tensors stays an index op."""
    from pyctorch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex
    y = pyctorch.arange(12.0).reshape(3, 4)
    with TransformGetItemToIndex():
        got = pyctorch.func.vmap(pyctorch.func.vmap(lambda a, b: y[a, b] > 3, in_dims=(None, 0)),
                                 in_dims=(0, None))(pyctorch.arange(3), pyctorch.arange(4))
    assert got.tolist() == (y > 3).tolist()


# ---- torch.distributed.tensor / device_mesh / _functional_collectives / _composable / checkpoint ----

@requires_torch
def test_placement_types_match_torch():
    from pyctorch.distributed.tensor import Partial, Replicate, Shard
    from pyctorch.distributed.tensor.placement_types import _StridedShard
    from torch.distributed.tensor import Partial as TPartial, Replicate as TReplicate, Shard as TShard
    for ours, theirs in ((Shard(1), TShard(1)), (Replicate(), TReplicate()), (Partial(), TPartial())):
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
        assert (ours.is_shard(), ours.is_replicate(), ours.is_partial()) == \
            (theirs.is_shard(), theirs.is_replicate(), theirs.is_partial())
    assert Shard(0) == Shard(0) != Shard(1) and len({Shard(0), Shard(0), Replicate()}) == 2
    assert _StridedShard(0, split_factor=2).is_shard(0)
    for size, chunks in ((10, 3), (8, 4), (2, 4), (0, 2)):
        for rank in range(chunks):
            assert Shard.local_shard_size_and_offset(size, chunks, rank) == \
                tuple(int(v) for v in TShard.local_shard_size_and_offset(size, chunks, rank))


def test_dtensor_and_device_mesh_refuse_to_be_made():
    from pyctorch.distributed.device_mesh import DeviceMesh, init_device_mesh
    from pyctorch.distributed.tensor import DTensor, distribute_tensor
    from pyctorch.distributed.checkpoint.hf_storage import HuggingFaceStorageReader
    assert issubclass(DTensor, pyctorch.Tensor) and not isinstance(pyctorch.ones(1), DTensor)
    for make in (DTensor, DeviceMesh, lambda: init_device_mesh("cpu", (1,)),
                 lambda: distribute_tensor(pyctorch.ones(1), None), lambda: HuggingFaceStorageReader("x")):
        with pytest.raises(NotImplementedError, match="pyctorch does not implement"):
            make()


def test_functional_collectives_single_rank():
    import pyctorch.distributed as dist
    from pyctorch.distributed import _functional_collectives as fc
    from pyctorch.distributed._composable.fsdp import fully_shard
    assert fully_shard is dist.fsdp.fully_shard
    t = pyctorch.arange(4.0)
    assert fc.wait_tensor(t) is t
    store = dist.HashStore()
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        x = pyctorch.arange(6.0).reshape(3, 2).requires_grad_()
        assert fc.all_reduce(x.detach(), "sum", None).tolist() == x.tolist()
        assert fc.all_gather_tensor(x.detach(), 0, None).tolist() == x.tolist()
        y = fc.all_to_all_single_autograd(x, [3], [3], None)
        (y * 2).sum().backward()
        assert y.tolist() == x.tolist() and x.grad.tolist() == [[2.0, 2.0]] * 3
    finally:
        dist.destroy_process_group()
