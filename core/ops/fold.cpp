// im2col and col2im over one table: for tap (i, j) and block (oh, ow), the position of the
// tapped pixel in the flattened padded image, (oh * sh + i * dh) * Wp + ow * sw + j * dw.
// im2col gathers those positions (index_select), col2im scatter-adds into them (index_add).
#include "ember/core/ops/fold.h"

#include <vector>

#include "ember/core/ops/creation.h"
#include "ember/core/ops/padding.h"

namespace ember {

namespace {

struct Geometry {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
};

Geometry geometry(IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  EMBER_CHECK(kernel_size.size() == 2, "It is expected kernel_size equals to 2, but got size ",
              kernel_size.size());
  EMBER_CHECK(dilation.size() == 2, "It is expected dilation equals to 2, but got size ", dilation.size());
  EMBER_CHECK(padding.size() == 2, "It is expected padding equals to 2, but got size ", padding.size());
  EMBER_CHECK(stride.size() == 2, "It is expected stride equals to 2, but got size ", stride.size());
  Geometry g{kernel_size[0], kernel_size[1], dilation[0], dilation[1],
             padding[0],     padding[1],     stride[0],   stride[1]};
  EMBER_CHECK(g.kw > 0 && g.kh > 0, "kernel size should be greater than zero, but got kernel_height: ", g.kh,
              " kernel_width: ", g.kw);
  EMBER_CHECK(g.sw > 0 && g.sh > 0, "stride should be greater than zero, but got stride_height: ", g.sh,
              " stride_width: ", g.sw);
  EMBER_CHECK(g.dw > 0 && g.dh > 0, "dilation should be greater than zero, but got dilation_height: ", g.dh,
              " dilation_width: ", g.dw);
  EMBER_CHECK(g.pw >= 0 && g.ph >= 0, "padding should be non-negative, but got pad_height: ", g.ph,
              " pad_width: ", g.pw);
  return g;
}

/// The number of block positions along an axis of size n (may be < 1 for too small inputs).
int64_t blocks(int64_t n, int64_t k, int64_t d, int64_t p, int64_t s) {
  return (n + 2 * p - d * (k - 1) - 1) / s + 1;
}

/// The flattened padded positions, ordered (i, j, oh, ow), on the input's device.
Tensor positions(const Geometry& g, int64_t wp, int64_t oh, int64_t ow, Device device) {
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(g.kh * g.kw * oh * ow));
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) idx.push_back((y * g.sh + i * g.dh) * wp + x * g.sw + j * g.dw);
  return tensor(idx).to(device);
}

std::string pair(int64_t a, int64_t b) { return "(" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

}  // namespace

Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride) {
  const Geometry g = geometry(kernel_size, dilation, padding, stride);
  const int64_t ndim = self.dim();
  bool valid = ndim == 3 || ndim == 4;
  for (int64_t d = ndim == 4 ? 1 : 0; valid && d < ndim; ++d) valid = self.size(d) != 0;
  EMBER_CHECK(
      valid,
      "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
      "input, but got: ",
      self.sizes());
  const Tensor x = ndim == 3 ? self.unsqueeze(0) : self;
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const int64_t oh = blocks(h, g.kh, g.dh, g.ph, g.sh), ow = blocks(w, g.kw, g.dw, g.pw, g.sw);
  EMBER_CHECK(oh >= 1 && ow >= 1, "Given input with spatial size ", pair(h, w),
              ", kernel_size=", pair(g.kh, g.kw), ", dilation=", pair(g.dh, g.dw),
              ", padding=", pair(g.ph, g.pw), ", calculated shape of the array of sliding blocks as ",
              pair(oh, ow), ", but its components must be at least one.");
  const Tensor padded = (g.ph || g.pw) ? constant_pad_nd(x, {g.pw, g.pw, g.ph, g.ph}, 0) : x;
  const int64_t wp = w + 2 * g.pw;
  Tensor cols = padded.reshape({n, c, -1}).index_select(2, positions(g, wp, oh, ow, x.device()));
  cols = cols.reshape({n, c * g.kh * g.kw, oh * ow});
  return ndim == 3 ? cols.squeeze(0) : cols;
}

Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  EMBER_CHECK(output_size.size() == 2, "It is expected output_size equals to 2, but got size ",
              output_size.size());
  const Geometry g = geometry(kernel_size, dilation, padding, stride);
  const int64_t ndim = self.dim();
  bool valid = ndim == 2 || ndim == 3;
  for (int64_t d = ndim == 3 ? 1 : 0; valid && d < ndim; ++d) valid = self.size(d) != 0;
  EMBER_CHECK(
      valid,
      "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
      "for input, but got: ",
      self.sizes());
  const Tensor cols = ndim == 2 ? self.unsqueeze(0) : self;
  const int64_t taps = g.kh * g.kw;
  EMBER_CHECK(cols.size(1) % taps == 0,
              "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
              "input.size(1)=",
              cols.size(1), " and kernel_size=", pair(g.kh, g.kw), ".");
  const int64_t h = output_size[0], w = output_size[1];
  const int64_t oh = blocks(h, g.kh, g.dh, g.ph, g.sh), ow = blocks(w, g.kw, g.dw, g.pw, g.sw);
  EMBER_CHECK(cols.size(2) == oh * ow, "Given output_size=", pair(h, w), ", kernel_size=", pair(g.kh, g.kw),
              ", dilation=", pair(g.dh, g.dw), ", padding=", pair(g.ph, g.pw), ", stride=", pair(g.sh, g.sw),
              ", expected size of input's dimension 2 to match the calculated number of sliding blocks ", oh,
              " * ", ow, " = ", oh * ow, ", but got input.size(2)=", cols.size(2), ".");
  EMBER_CHECK(oh >= 1 && ow >= 1, "Given output_size=", pair(h, w), ", kernel_size=", pair(g.kh, g.kw),
              ", dilation=", pair(g.dh, g.dw), ", padding=", pair(g.ph, g.pw), ", stride=", pair(g.sh, g.sw),
              ", calculated shape of the array of sliding blocks as ", pair(oh, ow),
              ", which is too small (non-positive)");
  const int64_t n = cols.size(0), c = cols.size(1) / taps, hp = h + 2 * g.ph, wp = w + 2 * g.pw;
  Tensor image = zeros({n, c, hp * wp}, cols.options());
  image = image.index_add(2, positions(g, wp, oh, ow, cols.device()), cols.reshape({n, c, -1}));
  image = image.view({n, c, hp, wp});
  if (g.ph || g.pw) image = constant_pad_nd(image, {-g.pw, -g.pw, -g.ph, -g.ph}, 0);
  return ndim == 2 ? image.squeeze(0) : image;
}

}  // namespace ember
