// One rank of the SyncBatchNorm tests (tests/dist/test_sync_batch_norm.cpp spawns it N times
// with torchrun's environment). Usage: ember_sync_bn_worker parity|convert.
// Every rank builds the whole concatenated batch from a fixed seed, so it computes the
// reference (single-process BatchNorm over all ranks' rows) itself and checks its own slice.
// Exit code 0 = all checks passed; failures go to stderr, prefixed with the rank.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ember/dist/distributed.h"
#include "ember/dist/sync_batch_norm.h"
#include "ember/ember.h"
#include "worker_main.h"

namespace dist = ember::dist;
namespace nn = ember::nn;
using ember::ScalarType;
using ember::Tensor;

using namespace ember::test::worker;

namespace {

double max_diff(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return 1e30;
  if (a.numel() == 0) return 0;
  return (a.to(ember::kDouble) - b.to(ember::kDouble)).abs().max().item<double>();
}

void check_close(const Tensor& got, const Tensor& expected, double tol, const std::string& what) {
  double d = max_diff(got, expected);
  std::ostringstream message;
  message << what << ": max |diff| " << d << " > " << tol;
  check(d <= tol, message.str());
}

// Uneven per-rank batches: rank r holds 2 + r rows (ranks 0..2: 2, 3, 4); with
// g_rank0_empty, rank 0 holds none (it must still take part in every collective).
bool g_rank0_empty = false;
int64_t rows_of(int r) { return r == 0 && g_rank0_empty ? 0 : 2 + r; }
int64_t offset_of(int r) {
  int64_t o = 0;
  for (int q = 0; q < r; ++q) o += rows_of(q);
  return o;
}

// Sets the affine parameters to distinct values (not ones/zeros, which would hide mistakes).
template <class M>
void set_affine(M& m, int64_t c) {
  if (!m.weight.defined()) return;
  ember::NoGradGuard no_grad;
  Tensor i = ember::arange(c, ember::TensorOptions().dtype(ember::kDouble));
  m.weight.copy_(1 + 0.25 * i);
  m.bias.copy_(0.1 * i - 0.2);
}

// Two training steps and one evaluation of SyncBatchNorm on this rank's rows against
// BatchNorm{1,2}d on all rows: outputs, input/weight/bias gradients, running statistics.
template <class RefModule>
void parity(ScalarType dtype, std::vector<int64_t> tail, std::optional<double> momentum, double tol,
            const std::string& label, bool affine = true) {
  const int64_t C = 3;
  int64_t total = offset_of(g_size);
  std::vector<int64_t> full_shape{total, C};
  full_shape.insert(full_shape.end(), tail.begin(), tail.end());

  nn::SyncBatchNorm sync(nn::SyncBatchNormOptions(C).momentum(momentum).affine(affine));
  RefModule ref(nn::BatchNormOptions(C).momentum(momentum).affine(affine));
  sync->to(dtype);
  ref->to(dtype);
  set_affine(*sync, C);
  set_affine(*ref, C);

  for (int step = 0; step < 2; ++step) {
    std::string what = label + " step " + std::to_string(step);
    ember::manual_seed(100 + static_cast<uint64_t>(step));
    Tensor x_full =
        (ember::randn(full_shape, ember::TensorOptions().dtype(ember::kDouble)) * 2 + 0.5).to(dtype);
    Tensor g_full = ember::randn(full_shape, ember::TensorOptions().dtype(ember::kDouble)).to(dtype);
    Tensor x = x_full.narrow(0, offset_of(g_rank), rows_of(g_rank)).clone().requires_grad_(true);
    Tensor g = g_full.narrow(0, offset_of(g_rank), rows_of(g_rank));
    Tensor xr = x_full.clone().requires_grad_(true);

    sync->zero_grad();
    ref->zero_grad();
    Tensor y = sync->forward(x);
    Tensor yr = ref->forward(xr);
    (y * g).sum().backward();
    (yr * g_full).sum().backward();

    check(y.dtype() == dtype, what + ": output dtype");
    check_close(y, yr.narrow(0, offset_of(g_rank), rows_of(g_rank)), tol, what + ": output");
    check_close(x.grad(), xr.grad().narrow(0, offset_of(g_rank), rows_of(g_rank)), tol,
                what + ": input grad");
    // Weight and bias gradients are this rank's share (DDP sums them): their sum is BatchNorm's.
    if (affine) {
      Tensor gw = sync->weight.grad().clone(), gb = sync->bias.grad().clone();
      dist::all_reduce(gw);
      dist::all_reduce(gb);
      check_close(gw, ref->weight.grad(), tol * 10, what + ": weight grad summed over ranks");
      check_close(gb, ref->bias.grad(), tol * 10, what + ": bias grad summed over ranks");
    }
    check_close(sync->running_mean, ref->running_mean, tol, what + ": running_mean");
    check_close(sync->running_var, ref->running_var, tol, what + ": running_var");
    check(sync->num_batches_tracked.template item<int64_t>() == step + 1, what + ": num_batches_tracked");
  }
  // Evaluation: running statistics, no communication (a rank-local call must not hang).
  sync->eval();
  ref->eval();
  std::vector<int64_t> shape{rows_of(g_rank), C};
  shape.insert(shape.end(), tail.begin(), tail.end());
  Tensor x = ember::randn(shape, ember::TensorOptions().dtype(dtype));
  check_close(sync->forward(x), ref->forward(x), tol, label + ": eval output");
}

int run_parity() {
  dist::init_process_group("gloo", "env://", std::chrono::seconds(20));
  parity<nn::BatchNorm2d>(ember::kFloat, {4, 5}, 0.1, 1e-5, "float32 (N,C,4,5)");
  parity<nn::BatchNorm2d>(ember::kDouble, {4, 5}, 0.1, 1e-11, "float64 (N,C,4,5)");
  parity<nn::BatchNorm1d>(ember::kFloat, {}, std::nullopt, 1e-5, "float32 (N,C) momentum=None");
  parity<nn::BatchNorm1d>(ember::kDouble, {7}, 0.3, 1e-11, "float64 (N,C,7)");
  parity<nn::BatchNorm2d>(ember::kFloat, {2, 3}, 0.1, 1e-5, "float32 affine=False", /*affine=*/false);
  g_rank0_empty = true;
  parity<nn::BatchNorm2d>(ember::kDouble, {2, 3}, 0.1, 1e-11, "float64 rank 0 empty");
  g_rank0_empty = false;
  dist::destroy_process_group();
  return g_failures == 0 ? 0 : 1;
}

// A custom module with a BatchNorm member: its member cannot be rebound, so conversion refuses.
struct WithMember : nn::Module {
  WithMember() { bn = register_module("bn", nn::BatchNorm1d(4)); }
  nn::BatchNorm1d bn{nullptr};
};

int run_convert() {
  dist::init_process_group("gloo", "env://", std::chrono::seconds(20));
  auto build = [] {
    ember::manual_seed(7);
    return nn::Sequential(nn::Linear(5, 4), nn::BatchNorm1d(4), nn::ReLU(),
                          nn::Sequential(nn::Linear(4, 4), nn::BatchNorm1d(4)));
  };
  nn::Sequential model = build(), ref = build();
  Tensor old_weight = model[1]->as<nn::BatchNorm1d>()->weight;
  auto converted = nn::SyncBatchNormImpl::convert_sync_batchnorm(model.ptr());
  check(converted.get() == model.ptr().get(), "a Sequential is converted in place");
  auto* bn1 = model[1]->as<nn::SyncBatchNorm>();
  auto* bn2 = model[3]->as<nn::SequentialImpl>()->ptr(1)->as<nn::SyncBatchNorm>();
  check(bn1 && bn2, "both BatchNorm1d layers (one nested) became SyncBatchNorm");
  if (!bn1 || !bn2) return 1;
  check(bn1->weight.is_same(old_weight), "the converted layer shares the BatchNorm's weight");
  check(model->named_parameters().size() == ref->named_parameters().size(),
        "same parameters after conversion");
  check(model->named_children()["1"]->name() == "SyncBatchNorm", "named_children sees the new layer");

  ember::manual_seed(11);
  Tensor x_full = ember::randn({offset_of(g_size), 5});
  Tensor x = x_full.narrow(0, offset_of(g_rank), rows_of(g_rank));
  Tensor y = model->forward(x);
  Tensor yr = ref->forward(x_full);
  check_close(y, yr.narrow(0, offset_of(g_rank), rows_of(g_rank)), 1e-5, "converted Sequential's output");
  check_close(bn2->running_var, ref[3]->as<nn::SequentialImpl>()->ptr(1)->as<nn::BatchNorm1d>()->running_var,
              1e-5, "nested layer's running_var");

  // A lone BatchNorm gives a new SyncBatchNorm with the same state and training flag.
  nn::BatchNorm2d lone(6);
  lone->eval();
  auto single = nn::SyncBatchNormImpl::convert_sync_batchnorm(lone.ptr());
  auto* s = single->as<nn::SyncBatchNorm>();
  check(s && !s->is_training() && s->running_mean.is_same(lone->running_mean), "lone BatchNorm2d converted");

  std::string error;
  try {
    nn::SyncBatchNormImpl::convert_sync_batchnorm(std::make_shared<WithMember>());
  } catch (const ember::Error& e) {
    error = e.what();
  }
  check(error.find("cannot replace the BatchNorm child 'bn'") != std::string::npos,
        "a BatchNorm member of a custom module is refused: " + error);
  dist::destroy_process_group();
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return run_scenario(argc, argv, "ember_sync_bn_worker",
                      {
                          {"parity", [] { return run_parity(); }},
                          {"convert", [] { return run_convert(); }},
                      });
}
