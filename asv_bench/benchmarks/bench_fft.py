"""numbagrad.fft against torch.fft: ``irfft(rfft(x))`` of a 4096 x 1024 float64 batch,
forward and backward (issue 29's target: at most 1.0x PyTorch's CPU time), and the
spectral convolution of a Fourier neural operator layer (complex einsum between the two).
The NumPy backend runs the same transforms with the adjoints written out by hand."""

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
