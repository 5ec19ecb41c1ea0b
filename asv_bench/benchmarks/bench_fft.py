"""numbagrad.fft against torch.fft: ``irfft(rfft(x))`` of a 4096 x 1024 float64 batch,
forward and backward (issue 29's target: at most 1.0x PyTorch's CPU time), the spectral
convolution of a Fourier neural operator layer (complex einsum between the two), and a
whole FNO training step (issue 29's target: at most 1.2x PyTorch's CPU time). The NumPy
backend runs the same transforms with the adjoints written out by hand."""

import numpy as np

from ._common import BackendBenchmark, leaf, rng


def _numpy_rfft_irfft(np_, x, n):
    def run():
        spec = np_.fft.rfft(x)
        y = np_.fft.irfft(spec, n=n)
        g = y  # the cotangent: d(sum(y ** 2) / 2) / dy
        # irfft's adjoint: the one-sided rfft of g with mirrored entries doubled, scaled 1/n
        gs = np_.fft.rfft(g) / n
        gs[..., 1 : n - n // 2] *= 2
        # rfft's adjoint: the C2R of the gradient with mirrored entries halved, unscaled
        gs[..., 1 : n - n // 2] *= 0.5
        return np_.fft.irfft(gs, n=n) * n

    return run


class RfftIrfft(BackendBenchmark):
    """``irfft(rfft(x))`` of 4096 rows of 1024 float64 samples, forward and backward."""

    shape = (4096, 1024)
    number = 1
    repeat = (3, 10, 30.0)

    def build_numpy(self, np_):
        return _numpy_rfft_irfft(np_, rng().standard_normal(self.shape), self.shape[-1])

    def build_tensor(self, mod):
        x = leaf(mod, rng().standard_normal(self.shape))
        n = self.shape[-1]

        def run():
            x.grad = None
            y = mod.fft.irfft(mod.fft.rfft(x), n=n)
            ((y * y).sum() / 2).backward()
            return x.grad

        return run

    def time_rfft_irfft(self, backend):
        """Forward + backward of ``irfft(rfft(x))`` (the gradient is ``x``)."""
        return self.run()


class SpectralConv(BackendBenchmark):
    """One FNO spectral convolution (32 channels, 16 modes, length 256, batch 20, float32):
    ``irfft(einsum('bix,iox->box', rfft(x)[..., :16], W))``, forward and backward."""

    params = [["numbagrad", "torch"]]
    number = 5
    repeat = (5, 20, 20.0)

    def build_numpy(self, np_):
        raise NotImplementedError("no NumPy version")

    def build_tensor(self, mod):
        r = rng()
        x = leaf(mod, r.standard_normal((20, 32, 256)).astype(np.float32))
        w0 = (r.standard_normal((32, 32, 16)) + 1j * r.standard_normal((32, 32, 16))) / 1024
        w = leaf(mod, w0.astype(np.complex64))

        def run():
            x.grad = w.grad = None
            x_ft = mod.fft.rfft(x)
            out = mod.zeros(20, 32, 129, dtype=mod.cfloat)
            out[:, :, :16] = mod.einsum("bix,iox->box", x_ft[:, :, :16], w)
            y = mod.fft.irfft(out, n=256)
            (y * y).sum().backward()
            return x.grad, w.grad

        return run

    def time_spectral_conv(self, backend):
        """Forward + backward of one spectral convolution."""
        return self.run()


def _fno_1d(mod, modes=16, width=32):
    """The ``fourier_1d.py`` architecture (Li et al., Fourier neural operator) with two
    Fourier layers: a lifting ``Linear(2, width)``, two spectral convolutions with 1x1
    ``Conv1d`` skips and GELU, a projection ``Linear(width, 128)``, GELU, ``Linear(128, 1)``."""
    nn, fn = mod.nn, mod.nn.functional

    class SpectralConv1d(nn.Module):
        def __init__(self):
            super().__init__()
            w = mod.rand(width, width, modes, dtype=mod.cfloat) / (width * width)
            self.weights1 = nn.Parameter(w)

        def forward(self, x):
            x_ft = mod.fft.rfft(x)
            out_ft = mod.zeros(x.shape[0], width, x.shape[-1] // 2 + 1, dtype=mod.cfloat)
            out_ft[:, :, :modes] = mod.einsum("bix,iox->box", x_ft[:, :, :modes], self.weights1)
            return mod.fft.irfft(out_ft, n=x.shape[-1])

    class FNO1d(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc0 = nn.Linear(2, width)
            self.conv0, self.conv1 = SpectralConv1d(), SpectralConv1d()
            self.w0, self.w1 = nn.Conv1d(width, width, 1), nn.Conv1d(width, width, 1)
            self.fc1 = nn.Linear(width, 128)
            self.fc2 = nn.Linear(128, 1)

        def forward(self, x):
            x = self.fc0(x).permute(0, 2, 1)
            x = fn.gelu(self.conv0(x) + self.w0(x))
            x = (self.conv1(x) + self.w1(x)).permute(0, 2, 1)
            return self.fc2(fn.gelu(self.fc1(x)))

    return FNO1d()


class FNOStep(BackendBenchmark):
    """One SGD step of the two-layer FNO (batch 20, length 256, float32, MSE loss), the
    same weights and data in both libraries."""

    params = [["numbagrad", "torch"]]
    number = 5
    repeat = (5, 20, 20.0)

    def build_numpy(self, np_):
        raise NotImplementedError("no NumPy version of an FNO training step")

    def build_tensor(self, mod):
        mod.manual_seed(0)
        model = _fno_1d(mod)
        r = rng(1)
        state = model.state_dict()
        for k, v in state.items():
            a = r.standard_normal(tuple(v.shape)) * 0.1
            if v.dtype == mod.cfloat:
                a = a + 1j * r.standard_normal(tuple(v.shape)) * 0.1
            state[k] = mod.tensor(a.astype(np.complex64 if v.dtype == mod.cfloat else np.float32))
        model.load_state_dict(state)
        opt = mod.optim.SGD(model.parameters(), lr=1e-3)
        grid = np.broadcast_to(
            np.linspace(0, 1, 256, dtype=np.float32)[None, :, None], (20, 256, 1)
        )
        x = mod.tensor(
            np.concatenate([r.standard_normal((20, 256, 1)).astype(np.float32), grid], -1)
        )
        y = mod.tensor(r.standard_normal((20, 256, 1)).astype(np.float32))

        def step():
            opt.zero_grad()
            loss = mod.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            return [loss.detach()]

        return step

    def time_step(self, backend):
        """Forward, backward and SGD step of the FNO, float32."""
        return self.run()
