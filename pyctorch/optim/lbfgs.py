"""L-BFGS, as torch.optim.LBFGS: a limited-memory quasi-Newton method with an optional strong-Wolfe
line search (cubic interpolation, as in Nocedal & Wright, Algorithms 3.5 and 3.6).

The arithmetic mixes Python floats and 0-d tensors exactly where torch's does (a dot product stays a
tensor of the parameters' dtype, a loss becomes a float), so step sizes round the same way.
"""
import pyctorch as torch

from .optimizer import Optimizer, _rdiv, _to_scalar

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to bounds (default: [x1, x2]);
    the middle of the bounds when the cubic has no minimum."""
    if bounds is None:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    else:
        lo, hi = bounds
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if not d2_square >= 0:
        return (lo + hi) / 2.0
    d2 = d2_square.sqrt() if isinstance(d2_square, torch.Tensor) else d2_square ** 0.5
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, lo), hi)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along d from x for a step t meeting the strong Wolfe conditions (sufficient decrease c1,
    curvature c2). obj_func(x, t, d) -> (loss float, flat gradient). Returns (f, g, t, evaluations)."""
    d_norm = d.abs().max()
    g = g.clone(memory_format=torch.contiguous_format)
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)

    # phase 1: grow the step until an interval [t_prev, t] brackets an acceptable step
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    it = 0
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g = [g_prev, g_new.clone(memory_format=torch.contiguous_format)]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g = [g_prev, g_new.clone(memory_format=torch.contiguous_format)]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        # extrapolate: a cubic step between 1.01 t and 10 t
        t_next = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                    bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, gtd_prev = t, f_new, gtd_new
        g_prev = g_new.clone(memory_format=torch.contiguous_format)
        t = t_next
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        it += 1
    if it == max_ls:  # nothing bracketed within the budget
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # phase 2: shrink the bracket (zoom) until a point meets the conditions
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # keep t at least 10% of the bracket away from its ends; a second time in a row, or outside
        # the bracket, move it there
        b_max, b_min = max(bracket), min(bracket)
        eps = 0.1 * (b_max - b_min)
        if min(b_max - t, t - b_min) < eps:
            if insufficient_progress or t >= b_max or t <= b_min:
                t = b_max - eps if abs(t - b_max) < abs(t - b_min) else b_min + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False

        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        it += 1

        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            # not enough decrease: t becomes the high end
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high] = g_new.clone(memory_format=torch.contiguous_format)
            bracket_gtd[high] = gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                # the slope points out of the bracket: the old low end becomes the high end
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low] = g_new.clone(memory_format=torch.contiguous_format)
            bracket_gtd[low] = gtd_new

    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """L-BFGS over all parameters as one flat vector; step(closure) re-evaluates the loss as needed.
    One parameter group only."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change, "history_size": history_size, "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        return torch.cat([p.new_zeros(p.numel()) if p.grad is None else p.grad.view(-1) for p in self._params], 0)

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=step_size)
            offset += n
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _clone_param(self):
        return [p.clone(memory_format=torch.contiguous_format) for p in self._params]

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            p.copy_(data)

    def _directional_evaluate(self, closure, x, t, d):
        """Loss and flat gradient at x + t d (the parameters are put back to x afterwards)."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def _two_loop_direction(self, flat_grad, old_dirs, old_stps, ro, H_diag, al):
        """-H g by the L-BFGS two-loop recursion over the stored (y, s) pairs."""
        q = flat_grad.neg()
        num_old = len(old_dirs)
        for i in range(num_old - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-al[i])
        r = torch.mul(q, H_diag)
        for i in range(num_old):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=al[i] - be_i)
        return r

    @torch.no_grad()
    def step(self, closure):
        """One L-BFGS step (up to max_iter iterations); closure clears the gradients, computes the loss,
        calls backward and returns the loss. Returns the loss of the first evaluation."""
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        closure = torch.enable_grad()(closure)
        group = self.param_groups[0]
        lr = _to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # the whole state lives under the first parameter (it is global to the flat vector)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:  # already at a stationary point
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # ---- the search direction
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only when the curvature condition holds
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(_rdiv(1.0, ys))
                    H_diag = ys / y.dot(y)
                if "al" not in state:
                    state["al"] = [None] * history_size
                d = self._two_loop_direction(flat_grad, old_dirs, old_stps, ro, H_diag, state["al"])

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone(memory_format=torch.contiguous_format)
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # ---- the step length
            t = min(1.0, _rdiv(1.0, flat_grad.abs().sum())) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)  # directional derivative
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                # a fixed step; the last iteration does not re-evaluate
                self._add_grad(t, d)
                if n_iter != max_iter:
                    with torch.enable_grad():
                        loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # ---- stopping conditions
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:  # the step became negligible
                break
            if abs(loss - prev_loss) < tolerance_change:  # so did the loss change
                break

        state["d"], state["t"] = d, t
        state["old_dirs"], state["old_stps"], state["ro"] = old_dirs, old_stps, ro
        state["H_diag"] = H_diag
        state["prev_flat_grad"], state["prev_loss"] = prev_flat_grad, prev_loss
        return orig_loss
