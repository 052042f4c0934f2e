"""The hparams plugin's three summaries for one run: the experiment (which hyperparameters and metrics
exist), the session start (this run's values) and the session end (its status)."""
import numbers

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2

from ._convert_np import make_np


def _summary(tag, **plugin_fields):
    content = plugin_data_pb2.HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **plugin_fields)
    plugin = SummaryMetadata.PluginData(plugin_name=metadata.PLUGIN_NAME, content=content.SerializeToString())
    return Summary(value=[Summary.Value(tag=tag, metadata=SummaryMetadata(plugin_data=plugin))])


def _kind(value):
    """(DataType name, struct_pb2.Value field) of a hyperparameter value, or None when it cannot be logged.

    A bool is logged as a number: bool is an int, and torch's writer tests for numbers first, so
    TensorBoard shows True as 1 either way and runs logged by both frameworks line up."""
    if isinstance(value, (numbers.Real, np.number, np.bool_)):
        return "DATA_TYPE_FLOAT64", "number_value"
    if isinstance(value, str):
        return "DATA_TYPE_STRING", "string_value"
    return None


def _check_discrete_domains(hparam_dict, domains):
    for name, values in domains.items():
        if (name not in hparam_dict or not isinstance(values, list)
                or not all(isinstance(v, type(hparam_dict[name])) for v in values)):
            raise TypeError(f"hparam_domain_discrete[{name}] must be a list of values of the type of "
                            f"hparam_dict[{name}], a hyperparameter that hparam_dict names")


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """(experiment, session start, session end) Summaries for these hyperparameters and metric names."""
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("hparams: hparam_dict and metric_dict must both be dicts.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("hparams: hparam_domain_discrete must be a dict of lists.")
    _check_discrete_domains(hparam_dict, domains)

    start = plugin_data_pb2.SessionStartInfo()
    infos = []
    for name, value in hparam_dict.items():
        if value is None:
            continue  # an unset hyperparameter is left out, not logged as a null
        tensor_given = not isinstance(value, (numbers.Number, np.generic, str))
        if tensor_given:  # a tensor or array: its first element, as a number
            try:
                value = float(make_np(value).reshape(-1)[0])
            except NotImplementedError:
                value = None  # neither a tensor nor an array: refused below
        kind = _kind(value)
        if kind is None:
            raise ValueError(f"hparam_dict[{name!r}]: a hyperparameter must be a number, a bool, a str or a "
                             "one-element tensor")
        data_type, field = kind
        setattr(start.hparams[name], field, float(value) if field == "number_value" else str(value))
        domain = None
        if name in domains and not tensor_given:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: v}) for v in domains[name]])
        infos.append(api_pb2.HParamInfo(name=name, type=api_pb2.DataType.Value(data_type), domain_discrete=domain))

    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=name)) for name in metric_dict]
    experiment = _summary(metadata.EXPERIMENT_TAG,
                          experiment=api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics))
    session_start = _summary(metadata.SESSION_START_INFO_TAG, session_start_info=start)
    session_end = _summary(metadata.SESSION_END_INFO_TAG, session_end_info=plugin_data_pb2.SessionEndInfo(
        status=api_pb2.Status.Value("STATUS_SUCCESS")))
    return experiment, session_start, session_end
