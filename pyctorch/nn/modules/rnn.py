"""Recurrent layers: RNN, LSTM, GRU and their cells, with torch's parameters, init and numerics.

Each layer and direction computes the input half of its gates for the whole sequence in one GEMM
(`x @ W_ih^T + b_ih`, as torch's pre-computed input path), then walks the time steps with the
hidden half. PackedSequence inputs are walked in their packed layout: at step t only the first
batch_sizes[t] rows are running, rows that stop keep their last hidden state."""
import math
import numbers

import pyctorch as torch
from .module import Module
from ..parameter import Parameter
from .. import functional as F
from .. import init
from ..utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# ---- one step of each cell (igates = x W_ih^T + b_ih, already computed) -------------------------

def _rnn_step(act):
    def step(igates, h, w_hh, b_hh, w_hr=None):
        return act(F.linear(h, w_hh, b_hh) + igates)
    return step


def _lstm_step(igates, state, w_hh, b_hh, w_hr=None):
    h, c = state
    gates = F.linear(h, w_hh, b_hh) + igates
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(igates, h, w_hh, b_hh, w_hr=None):
    hgates = F.linear(h, w_hh, b_hh)
    ir, iz, in_ = igates.chunk(3, 1)
    hr, hz, hn = hgates.chunk(3, 1)
    r = (hr + ir).sigmoid()
    z = (hz + iz).sigmoid()
    n = (in_ + hn * r).tanh()
    return (h - n) * z + n


_STEPS = {"LSTM": _lstm_step, "GRU": _gru_step, "RNN_TANH": _rnn_step(lambda t: t.tanh()),
          "RNN_RELU": _rnn_step(lambda t: t.relu())}


def _rows(state, a, b):
    return tuple(s[a:b] for s in state) if isinstance(state, tuple) else state[a:b]


def _cat_rows(parts):
    if isinstance(parts[0], tuple):
        return tuple(torch.cat([p[k] for p in parts]) for k in range(len(parts[0])))
    return torch.cat(parts)


def _run_direction(step, x, batch_sizes, state, weights, reverse):
    """One layer, one direction over packed steps. x: (sum of batch_sizes, I); state rows = batch_sizes[0]."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    igates = F.linear(x, w_ih, b_ih)
    offsets = [0]
    for b in batch_sizes:
        offsets.append(offsets[-1] + b)
    outputs = [None] * len(batch_sizes)
    if not reverse:
        finished = []  # final states of rows that stopped, latest first
        cur = state
        for t, b in enumerate(batch_sizes):
            prev = batch_sizes[t - 1] if t else batch_sizes[0]
            if b < prev:
                finished.append(_rows(cur, b, prev))
                cur = _rows(cur, 0, b)
            cur = step(igates[offsets[t]:offsets[t + 1]], cur, w_hh, b_hh, w_hr)
            outputs[t] = cur[0] if isinstance(cur, tuple) else cur
        final = _cat_rows([cur] + finished[::-1]) if finished else cur
    else:
        last = batch_sizes[-1] if batch_sizes else 0
        cur = _rows(state, 0, last)
        for t in range(len(batch_sizes) - 1, -1, -1):
            b = batch_sizes[t]
            have = batch_sizes[t + 1] if t + 1 < len(batch_sizes) else last
            if b > have:
                cur = _cat_rows([cur, _rows(state, have, b)])
            cur = step(igates[offsets[t]:offsets[t + 1]], cur, w_hh, b_hh, w_hr)
            outputs[t] = cur[0] if isinstance(cur, tuple) else cur
        final = cur
    return torch.cat(outputs) if outputs else x.new_zeros((0, 0)), final


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            import warnings
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                params = [("weight_ih_l{}{}", (gate_size, layer_input)), ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    params += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    params.append(("weight_hr_l{}{}", (proj_size, hidden_size)))
                names = []
                for fmt, shape in params:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(torch.empty(shape, dtype=dtype, device=device)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: the weights are used where they are (torch compacts them for cuDNN)."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _weights(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        get = lambda fmt: getattr(self, fmt.format(layer, suffix), None)  # noqa: E731
        return (get("weight_ih_l{}{}"), get("weight_hh_l{}{}"), get("bias_ih_l{}{}"), get("bias_hh_l{}{}"),
                get("weight_hr_l{}{}") if self.proj_size else None)

    def _check_hidden(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(msg.format(list(expected), list(hx.shape)))

    def forward(self, input, hx=None):
        is_lstm = self.mode == "LSTM"
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        unbatched = False
        if packed:
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
            batch = batch_sizes[0]
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D "
                                 "tensor instead")
            unbatched = input.dim() == 2
            x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first else input)
            steps, batch = x.shape[0], x.shape[1]
            batch_sizes = [batch] * steps
            data = x.reshape((steps * batch,) + tuple(x.shape[2:]))
            sorted_indices = unsorted_indices = None
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {data.shape[-1]}")
        h_shape = (self.num_layers * num_directions, batch, real_hidden)
        c_shape = (self.num_layers * num_directions, batch, self.hidden_size)
        if hx is None:
            h0 = torch.zeros(h_shape, dtype=data.dtype)
            state0 = (h0, torch.zeros(c_shape, dtype=data.dtype)) if is_lstm else h0
        else:
            if is_lstm and not (isinstance(hx, tuple) and len(hx) == 2):
                raise RuntimeError("LSTM expects hx to be a tuple (h_0, c_0)")
            parts = list(hx) if is_lstm else [hx]
            if unbatched:
                for p in parts:
                    if p.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {p.dim()}-D tensor")
                parts = [p.unsqueeze(1) for p in parts]
            elif not packed:
                for p in parts:
                    if p.dim() != 3:
                        raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {p.dim()}-D tensor")
            if sorted_indices is not None:
                parts = [p.index_select(1, sorted_indices) for p in parts]
            self._check_hidden(parts[0], h_shape)
            if is_lstm:
                self._check_hidden(parts[1], c_shape, "Expected hidden[1] size {}, got {}")
            state0 = tuple(parts) if is_lstm else parts[0]
        step = _STEPS[self.mode]
        finals = []
        layer_input = data
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                state = tuple(s[k] for s in state0) if is_lstm else state0[k]
                out, final = _run_direction(step, layer_input, batch_sizes, state, self._weights(layer, direction),
                                            reverse=direction == 1)
                outs.append(out)
                finals.append(final)
            layer_input = outs[0] if num_directions == 1 else torch.cat(outs, 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        if is_lstm:
            hidden = (torch.stack([f[0] for f in finals]), torch.stack([f[1] for f in finals]))
        else:
            hidden = torch.stack(finals)
        if packed:
            if unsorted_indices is not None:
                hidden = (tuple(h.index_select(1, unsorted_indices) for h in hidden) if is_lstm
                          else hidden.index_select(1, unsorted_indices))
            return PackedSequence(layer_input, batch_sizes_t, sorted_indices, unsorted_indices), hidden
        output = layer_input.reshape((len(batch_sizes), batch, layer_input.shape[-1]))
        if unbatched:
            output = output.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden) if is_lstm else hidden.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, hidden


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        names = ["input_size", "hidden_size", "num_layers", "nonlinearity", "bias", "batch_first", "dropout",
                 "bidirectional"]
        if len(args) > len(names):
            raise TypeError(f"RNN takes at most {len(names)} positional arguments")
        kwargs.update(zip(names, args))
        self.nonlinearity = nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, **kwargs)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(torch.empty((num_chunks * hidden_size, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(torch.empty((num_chunks * hidden_size, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(torch.empty(num_chunks * hidden_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(torch.empty(num_chunks * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, lstm=False):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        if hx is None:
            z = torch.zeros((x.shape[0], self.hidden_size), dtype=input.dtype)
            hx = (z, z) if lstm else z
        else:
            parts = hx if lstm else (hx,)
            for p in parts:
                if p.dim() != input.dim():
                    raise RuntimeError(f"{type(self).__name__}: Expected hidden to be {input.dim()}D, got "
                                       f"{p.dim()}D instead")
            if unbatched:
                parts = tuple(p.unsqueeze(0) for p in parts)
            for p in parts:
                if tuple(p.shape) != (x.shape[0], self.hidden_size):
                    raise RuntimeError(f"hidden{'[0]' if lstm else ''} has inconsistent hidden_size: got "
                                       f"{p.shape[-1]}, expected {self.hidden_size}" if p.shape[-1] != self.hidden_size
                                       else f"Input batch size {x.shape[0]} doesn't match hidden batch size "
                                       f"{p.shape[0]}")
            hx = tuple(parts) if lstm else parts[0]
        return x, hx, unbatched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x, h, unbatched = self._prepare(input, hx)
        step = _STEPS["RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"]
        h = step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h.squeeze(0) if unbatched else h


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, state, unbatched = self._prepare(input, hx, lstm=True)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), state, self.weight_hh, self.bias_hh)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, h, unbatched = self._prepare(input, hx)
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h.squeeze(0) if unbatched else h
