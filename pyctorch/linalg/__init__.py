"""torch.linalg: norms, products and the SVD implemented by the C op table."""
from .. import _C

vector_norm = _C.linalg_vector_norm
matrix_norm = _C.linalg_matrix_norm
norm = _C.linalg_norm
matmul = _C.matmul
svd = _C.linalg_svd
svdvals = _C.linalg_svdvals
LinAlgError = _C._LinAlgError
