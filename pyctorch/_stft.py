"""torch.stft and torch.istft (and their Tensor methods): the short-time Fourier transform as a composite over the
FFT primitives of the op table (ops_fft.def): frames are a strided view of the (padded) signal, windowed, then
transformed along their last dim; istft inverts each frame and overlap-adds them with F.fold, divided by the summed
squared window (torch's SpectralOps semantics, torch's messages)."""
import warnings

from . import _C

__all__ = ["stft", "istft"]

_BY_ROOT_N, _BY_N, _NONE = 1, 2, 0


def _window_of(window, win_length, n_fft, like):
    """The window as n_fft points: the given one (or ones when None) zero-padded on both sides to n_fft."""
    if window is None and win_length == n_fft:
        return None
    if window is None:
        window = _C.ones(win_length, dtype=like.dtype.to_real() if like.dtype.is_complex else like.dtype,
                         device=like.device)
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    full = _C.zeros(n_fft, dtype=window.dtype, device=window.device)
    full.narrow(0, left, win_length).copy_(window)
    return full


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if align_to_window:
        raise NotImplementedError("pyctorch's stft does not implement align_to_window=True yet")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                      "explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    complex_in = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True
    elif not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D tensor")
    if center:
        from .nn import functional as F
        pad = n_fft // 2
        shape = list(input.shape)
        def padded(part):
            part = F.pad(part.reshape([1] * (3 - part.ndim) + shape), [pad, pad], pad_mode)
            return part.view(part.shape[-len(shape):])
        if input.dtype.is_complex:  # the padding kernels take real dtypes: the parts are padded apart
            input = _C.view_as_complex(_C.stack([padded(input.real), padded(input.imag)], -1))
        else:
            input = padded(input)
    x = input.unsqueeze(0) if input.ndim == 1 else input
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    window = _window_of(window, win_length, n_fft, x)
    frames = 1 + (length - n_fft) // hop_length
    s0, s1 = x.stride()
    x = x.as_strided((x.shape[0], frames, n_fft), (s0, hop_length * s1, s1), x.storage_offset())
    if window is not None:
        x = x * window
    onesided = not complex_in if onesided is None else onesided
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    mode = _BY_ROOT_N if normalized else _NONE
    if x.dtype.is_complex:
        out = _C._fft_c2c(x, [2], mode, True)
    else:
        if not (x.dtype.is_floating_point and x.dtype in (_C.float32, _C.float64)):
            x = x.to(_C.get_default_dtype()) if not x.dtype.is_floating_point else x
        out = _C._fft_r2c(x, [2], mode, onesided)
    out = out.transpose(1, 2)
    if input.ndim == 1:
        out = out.squeeze(0)
    return out if return_complex else _C.view_as_real(out)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False, onesided=None,
          length=None, return_complex=False):
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide the same window "
                      "used by stft to make the inversion lossless.To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft expected a tensor with 2 or 3 dimensions of complex dtype, but got {input.ndim}")
    x = input.unsqueeze(0) if input.ndim == 2 else input
    frames, fft_size = x.shape[-1], x.shape[-2]
    expected = n_fft + hop_length * (frames - 1)
    if input.numel() == 0:
        raise RuntimeError("istft input tensor cannot be empty")
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError("istft expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        raise RuntimeError("istft expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError("istft expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError("istft expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError("Invalid window shape. window has to be 1D and length of `win_length`")
    if window is None:
        window = _C.ones(win_length, dtype=x.dtype.to_real(), device=x.device)
    window = _window_of(window, win_length, n_fft, x)
    x = x.transpose(1, 2)  # (batch, frames, freq)
    mode = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if onesided:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        x = _C._fft_c2c(x, [2], mode, False)
    else:
        if window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = x.narrow(2, 0, n_fft // 2 + 1)
        x = _C._fft_c2r(x, [2], mode, n_fft)
    from .nn import functional as F
    def overlap_add(cols):  # (batch, n_fft, frames) -> (batch, expected)
        if cols.dtype.is_complex:  # col2im takes real dtypes: the parts are added apart
            return _C.view_as_complex(_C.stack([overlap_add(cols.real), overlap_add(cols.imag)], -1))
        return F.fold(cols, (1, expected), (1, n_fft), stride=(1, hop_length)).reshape(cols.shape[0], expected)
    y = overlap_add((x * window).transpose(1, 2))
    sq = (window * window).reshape(1, n_fft, 1).expand(1, n_fft, frames)
    envelope = overlap_add(sq.contiguous())
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected - n_fft // 2 if center else expected
    end = min(end, expected)
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if envelope.numel() and float(envelope.abs().min()) < 1e-11:  # torch's check
        raise RuntimeError("istft window overlap add min: 1e-11")
    y = y / envelope
    if length is not None and y.shape[1] < length:
        y = _C.cat([y, _C.zeros(y.shape[0], length - y.shape[1], dtype=y.dtype, device=y.device)], 1)
    return y.squeeze(0) if input.ndim == 2 else y


TENSOR_METHODS = {"stft": stft, "istft": istft}
