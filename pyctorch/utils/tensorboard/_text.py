"""Text summaries for the text plugin: one UTF-8 string per step under `<tag>/text_summary`."""
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData


def text(tag, text_string):
    plugin = SummaryMetadata.PluginData(plugin_name="text", content=TextPluginData(version=0).SerializeToString())
    tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf-8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", tensor=tensor,
                                        metadata=SummaryMetadata(plugin_data=plugin))])
