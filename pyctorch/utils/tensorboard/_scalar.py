"""Scalar summaries: the classic `simple_value` form, or the scalars plugin's tensor form (`new_style`)."""
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto

from ._convert_np import make_np


def scalar(name, value, new_style=False, double_precision=False):
    """A Summary holding one number under tag `name`."""
    array = make_np(value).squeeze()
    if array.ndim != 0:
        # AssertionError is what torch's writer raises here; scripts that catch it keep working
        raise AssertionError(f"add_scalar needs a single value, got {array.size} values in {array.ndim} dimensions.")
    number = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=number)])
    if double_precision:
        tensor = TensorProto(dtype="DT_DOUBLE", double_val=[number])
    else:
        tensor = TensorProto(dtype="DT_FLOAT", float_val=[number])
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=tensor, metadata=metadata)])
