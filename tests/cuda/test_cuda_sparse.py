"""Sparse COO tensors whose indices and values live on the CUDA device: the same results as on the CPU, the results
on the device, the SparseCUDA backend named by the errors."""
import pytest

import pyctorch as torch

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]
VAL = [3.0, 4.0, 5.0, 1.0]


def _pair():
    cpu = torch.sparse_coo_tensor(IDX, VAL, (2, 3))
    return cpu, torch.sparse_coo_tensor(IDX, VAL, (2, 3), device="cuda")


def test_construction_and_structure_on_the_device():
    cpu, dev = _pair()
    assert dev.is_cuda and dev.device.type == "cuda" and dev._values().is_cuda and dev._indices().is_cuda
    c = dev.coalesce()
    assert c.indices().cpu().tolist() == cpu.coalesce().indices().tolist()
    assert c.values().cpu().tolist() == cpu.coalesce().values().tolist()
    assert dev.to_dense().is_cuda and dev.to_dense().cpu().tolist() == cpu.to_dense().tolist()
    assert dev.to("cpu").device.type == "cpu" and cpu.to("cuda").is_cuda


def test_products_reductions_and_grads_on_the_device():
    cpu, dev = _pair()
    dense = torch.arange(6.0).reshape(3, 2)
    assert torch.sparse.mm(dev, dense.cuda()).cpu().tolist() == torch.sparse.mm(cpu, dense).tolist()
    assert torch.sparse.sum(dev, 1).to_dense().cpu().tolist() == torch.sparse.sum(cpu, 1).to_dense().tolist()
    got = torch.sparse.softmax(dev, 1).to_dense().cpu()
    assert torch.allclose(got, torch.sparse.softmax(cpu, 1).to_dense())
    values = torch.tensor(VAL, device="cuda", requires_grad=True)
    d = dense.cuda().requires_grad_()
    torch.sparse.mm(torch.sparse_coo_tensor(torch.tensor(IDX, device="cuda"), values, (2, 3)), d).sum().backward()
    assert values.grad.is_cuda and values.grad.cpu().tolist() == [9.0, 1.0, 9.0, 9.0]
    assert d.grad.is_cuda and d.grad.cpu().tolist() == [[4.0, 4.0], [0.0, 0.0], [9.0, 9.0]]


def test_errors_name_the_sparse_cuda_backend():
    _, dev = _pair()
    with pytest.raises(NotImplementedError, match="'SparseCUDA' backend"):
        torch.exp(dev)
