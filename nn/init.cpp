// torch.nn.init: fills in place under no-grad. The distributions follow PyTorch's formulas;
// the random numbers come from ember's generator. Matrix work (orthogonal_, trunc_normal_'s
// inverse CDF, dirac_) runs on a double host buffer, then copy_ converts to the tensor's dtype.
#include "ember/nn/init.h"

#include <cmath>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/random.h"

namespace ember {
namespace nn {
namespace init {

namespace {

int64_t fan(const Tensor& tensor, const FanModeType& mode) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return std::holds_alternative<enumtype::kFanIn>(mode) ? fan_in : fan_out;
}

// A contiguous double copy of `tensor`'s shape on the CPU, for host-side filling.
Tensor host_double(IntArrayRef sizes) { return ember::zeros(sizes, kDouble); }

// erf^-1 by Newton's method on std::erf from a closed-form start (Winitzki's approximation);
// three steps reach double precision for |y| < 1.
double erfinv(double y) {
  if (y <= -1) return -INFINITY;
  if (y >= 1) return INFINITY;
  const double a = 0.147;
  double ln = std::log(1 - y * y);
  double t = 2 / (M_PI * a) + ln / 2;
  double x = std::copysign(std::sqrt(std::sqrt(t * t - ln / a) - t), y);
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - y) / (2 / std::sqrt(M_PI) * std::exp(-x * x));
  return x;
}

}  // namespace

double calculate_gain(NonlinearityType nonlinearity, double param) {
  return std::visit(
      [param](auto kind) -> double {
        using K = decltype(kind);
        if constexpr (std::is_same_v<K, enumtype::kTanh>) return 5.0 / 3;
        else if constexpr (std::is_same_v<K, enumtype::kReLU>) return std::sqrt(2.0);
        else if constexpr (std::is_same_v<K, enumtype::kLeakyReLU>) return std::sqrt(2.0 / (1 + param * param));
        else if constexpr (std::is_same_v<K, enumtype::kSELU>) return 3.0 / 4;
        else return 1.0;  // linear, conv*, conv_transpose*, sigmoid
      },
      nonlinearity);
}

std::tuple<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  EMBER_CHECK(tensor.dim() >= 2,
              "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive_field = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

Tensor uniform_(Tensor tensor, double low, double high) {
  NoGradGuard no_grad;
  tensor.uniform_(low, high);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  NoGradGuard no_grad;
  tensor.normal_(mean, std);
  return tensor;
}

Tensor constant_(Tensor tensor, Scalar value) {
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0); }
Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1); }

Tensor eye_(Tensor matrix) {
  EMBER_CHECK(matrix.dim() == 2, "Only tensors with 2 dimensions are supported");
  NoGradGuard no_grad;
  matrix.copy_(ember::eye(matrix.size(0), matrix.size(1), matrix.options()));
  return matrix;
}

Tensor dirac_(Tensor tensor, int64_t groups) {
  const int64_t dims = tensor.dim();
  EMBER_CHECK(dims >= 3 && dims <= 5, "Only tensors with 3, 4, or 5 dimensions are supported");
  EMBER_CHECK(groups > 0 && tensor.size(0) % groups == 0, "dim 0 must be divisible by groups");
  NoGradGuard no_grad;
  Tensor host = host_double(tensor.sizes());
  double* data = host.data_ptr<double>();
  const int64_t out_per_group = tensor.size(0) / groups;
  const int64_t min_dim = std::min(out_per_group, tensor.size(1));
  // Offset of the kernel's centre within one [kd, kh, kw] block.
  int64_t spatial = 1, centre = 0;
  for (int64_t d = 2; d < dims; ++d) {
    centre = centre * tensor.size(d) + tensor.size(d) / 2;
    spatial *= tensor.size(d);
  }
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t d = 0; d < min_dim; ++d)
      data[((g * out_per_group + d) * tensor.size(1) + d) * spatial + centre] = 1;
  tensor.copy_(host);
  return tensor;
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  double a = std::sqrt(3.0) * std;  // U(-a, a) has standard deviation std
  return uniform_(std::move(tensor), -a, a);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return normal_(std::move(tensor), 0, std);
}

Tensor kaiming_uniform_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  if (tensor.numel() == 0) return tensor;  // PyTorch: initializing zero-element tensors is a no-op
  double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(tensor, mode)));
  double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  if (tensor.numel() == 0) return tensor;
  double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(tensor, mode)));
  return normal_(std::move(tensor), 0, std);
}

// Q of the QR decomposition of a Gaussian matrix, with R's diagonal made positive (PyTorch
// multiplies Q by sign(diag(R))); Gram-Schmidt gives exactly that Q. Each column is
// orthogonalised twice ("twice is enough") for double-precision orthogonality.
Tensor orthogonal_(Tensor tensor, double gain) {
  EMBER_CHECK(tensor.dim() >= 2, "Only tensors with 2 or more dimensions are supported");
  if (tensor.numel() == 0) return tensor;
  NoGradGuard no_grad;
  const int64_t rows = tensor.size(0), cols = tensor.numel() / rows;
  // Work on the tall orientation: m >= n, orthonormal columns.
  const bool wide = rows < cols;
  const int64_t m = wide ? cols : rows, n = wide ? rows : cols;
  Tensor gaussian = ember::randn({n, m}, kDouble).contiguous();  // row j = column j of A
  std::vector<double> q(gaussian.data_ptr<double>(), gaussian.data_ptr<double>() + n * m);
  for (int64_t j = 0; j < n; ++j) {
    double* v = &q[static_cast<size_t>(j * m)];
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t k = 0; k < j; ++k) {
        const double* u = &q[static_cast<size_t>(k * m)];
        double dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += u[i] * v[i];
        for (int64_t i = 0; i < m; ++i) v[i] -= dot * u[i];
      }
    }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += v[i] * v[i];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < m; ++i) v[i] /= norm;
  }
  // q holds Q^T ([n, m]); the result is Q ([rows, cols] = [m, n]) or, when wide, Q^T.
  Tensor host = host_double({rows, cols});
  double* out = host.data_ptr<double>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = gain * (wide ? q[static_cast<size_t>(r * m + c)] : q[static_cast<size_t>(c * m + r)]);
  tensor.copy_(host.view(tensor.sizes()));
  return tensor;
}

// Inverse-CDF sampling as PyTorch: u ~ U(cdf(a), cdf(b)), x = mean + std * sqrt(2) *
// erfinv(2u - 1), clamped to [a, b] against rounding.
Tensor trunc_normal_(Tensor tensor, double mean, double std, double a, double b) {
  NoGradGuard no_grad;
  auto norm_cdf = [](double x) { return (1 + std::erf(x / std::sqrt(2.0))) / 2; };
  const double lo = norm_cdf((a - mean) / std), hi = norm_cdf((b - mean) / std);
  Tensor u = ember::rand(tensor.sizes(), kDouble).contiguous();
  double* p = u.data_ptr<double>();
  for (int64_t i = 0; i < u.numel(); ++i) {
    double v = 2 * (lo + p[i] * (hi - lo)) - 1;
    double x = mean + std * std::sqrt(2.0) * erfinv(v);
    p[i] = std::min(std::max(x, a), b);
  }
  tensor.copy_(u);
  return tensor;
}

}  // namespace init
}  // namespace nn
}  // namespace ember
