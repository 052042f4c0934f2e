"""The custom scalars plugin's layout: which scalar tags share a chart.

`layout` is {category: {chart title: ["Multiline", [tag regexes]] or ["Margin", [value, lower, upper]]}}."""
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2

# the tag the plugin looks for (tensorboard.plugins.custom_scalar.metadata.CONFIG_SUMMARY_TAG)
LAYOUT_TAG = "custom_scalars__config__"


def _chart(title, kind, tags):
    if kind == "Margin":
        if len(tags) != 3:
            raise AssertionError(f"a Margin chart needs 3 tags (value, lower, upper), got {len(tags)}")
        series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
        return layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=[series]))
    return layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags))


def custom_scalars(layout):
    categories = [layout_pb2.Category(title=category, chart=[_chart(title, spec[0], spec[1])
                                                             for title, spec in charts.items()])
                  for category, charts in layout.items()]
    serialized = layout_pb2.Layout(category=categories).SerializeToString()
    tensor = TensorProto(dtype="DT_STRING", string_val=[serialized], tensor_shape=TensorShapeProto())
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    return Summary(value=[Summary.Value(tag=LAYOUT_TAG, tensor=tensor, metadata=metadata)])
