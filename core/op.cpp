// run_op's helpers: device checks, output allocation, kernel dispatch, and recording an
// autograd Node for an op (OpNode). In-place ops and views hand their autograd bookkeeping
// to autograd/view_history.h (rebase_history, CopySlices, view grad_fn regeneration).
#include "ember/core/op.h"

#include <cctype>
#include <string_view>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/view_history.h"
#include "ember/core/ops/creation.h"
#include "ember/core/ops/shape.h"
#include "ember/core/ops/reduce.h"

namespace ember {
namespace {

/// "mul" -> "MulBackward0", "leaky_relu" -> "LeakyReluBackward0", "_to_copy" ->
/// "ToCopyBackward0" (PyTorch's node names).
std::string backward_name(const char* op) {
  std::string out;
  bool up = true;
  for (const char* c = op; *c; ++c) {
    if (*c == '_') { up = true; continue; }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(*c))) : *c;
    up = false;
  }
  return out + "Backward0";
}

}  // namespace

void Op::cuda(const TensorList&, TensorList&) const {
  detail::throw_error(detail::str_cat("\"", name(), "\" is not implemented for CUDA tensors"));
}

std::string Op::node_name() const { return backward_name(name()); }

TensorList Op::backward(const SavedTensors&, const TensorList&) const {
  detail::throw_error(detail::str_cat("the derivative for '", name(), "' is not implemented."));
}

void UnaryOp::cuda(const Tensor&, Tensor&) const {
  detail::throw_error(detail::str_cat("\"", name(), "\" is not implemented for CUDA tensors"));
}

Tensor UnaryOp::backward(const SavedTensors&, const Tensor&) const {
  detail::throw_error(detail::str_cat("the derivative for '", name(), "' is not implemented."));
}

namespace {

/// The Node recorded for one run of an Op. A second backward through it fails when its
/// saved tensors are unpacked (SavedTensor::unpack), as in PyTorch: ops that save nothing
/// may be run again.
class OpNode final : public autograd::Node {
 public:
  explicit OpNode(std::shared_ptr<Op> op) : op_(std::move(op)) {}

  std::string name() const override { return op_->node_name(); }

  TensorList apply(TensorList&& grads) override {
    // An output that received no gradient contributes zeros (only multi-output ops see this).
    for (size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined())
        grads[i] = zeros(input_metadata_[i].sizes,
                         TensorOptions().dtype(input_metadata_[i].dtype).device(input_metadata_[i].device));
    saved_.owner_ = weak_from_this();
    return op_->backward(saved_, grads);
  }

  void release_variables() override {
    for (auto& s : saved_.inputs) s.reset();
    for (auto& s : saved_.outputs) s.reset();
  }

  /// Saved inputs as "input<i>", saved outputs as "result" (PyTorch's name for a saved
  /// output; "result<i>" when the op has several).
  std::vector<autograd::SavedTensorInfo> saved_tensor_info() const override {
    std::vector<autograd::SavedTensorInfo> out;
    auto add = [&](const autograd::SavedTensor& s, std::string name) {
      if (s.peek().defined()) out.push_back({std::move(name), DimVector(s.peek().sizes()), s.peek().dtype()});
    };
    for (size_t i = 0; i < saved_.inputs.size(); ++i) add(saved_.inputs[i], "input" + std::to_string(i));
    for (size_t i = 0; i < saved_.outputs.size(); ++i)
      add(saved_.outputs[i], saved_.outputs.size() == 1 ? std::string("result") : "result" + std::to_string(i));
    return out;
  }

  SavedTensors& saved() { return saved_; }

 private:
  std::shared_ptr<Op> op_;
  SavedTensors saved_;
};

autograd::InputMetadata metadata_of(const Tensor& t) {
  return {DimVector(t.sizes()), t.dtype(), t.device()};
}

bool differentiable_dtype(ScalarType t) { return is_floating_point(t); }

}  // namespace

namespace detail {

Device check_same_device(const TensorList& inputs, const char* op_name) {
  (void)op_name;
  Device d = kCPU;
  bool first = true;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (first) { d = t.device(); first = false; continue; }
    EMBER_CHECK(t.device() == d,
                "Expected all tensors to be on the same device, but found at least two devices, ",
                d, " and ", t.device(), "!");
  }
  return d;
}

TensorList allocate_outputs(const std::vector<OutSpec>& specs, Device device) {
  TensorList out;
  out.reserve(specs.size());
  for (const OutSpec& s : specs) out.push_back(allocate_output(s, device));
  return out;
}

namespace {
// Plain pointers, so reading them is one TLS-relative load (initial-exec: libember is not
// dlopen()ed late) with no thread_local init guard; a Reaper frees the pool at thread exit.
__attribute__((tls_model("initial-exec"))) thread_local std::vector<TensorList>* t_list_pool = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local bool t_list_pool_gone = false;
constexpr size_t kListPoolSize = 16;

struct ListPoolReaper {
  ~ListPoolReaper() {
    delete t_list_pool;
    t_list_pool = nullptr;
    t_list_pool_gone = true;  // ops run by later thread_local destructors just free their list
  }
};
}  // namespace

PooledList::PooledList() {
  std::vector<TensorList>* pool = t_list_pool;
  if (pool && !pool->empty()) {
    list = std::move(pool->back());
    pool->pop_back();
  } else {
    list.reserve(2);
  }
}

PooledList::~PooledList() {
  list.clear();
  std::vector<TensorList>* pool = t_list_pool;
  if (!pool) {
    if (t_list_pool_gone) return;
    static thread_local ListPoolReaper reaper;  // registers the exit-time cleanup
    (void)reaper;
    pool = t_list_pool = new std::vector<TensorList>();
    pool->reserve(kListPoolSize);
  }
  if (pool->size() < kListPoolSize) pool->push_back(std::move(list));
}

Tensor allocate_output(const OutSpec& s, Device device) {
  return empty(s.sizes, TensorOptions().dtype(s.dtype).device(device));
}

// Every forward runs with grad mode off: what a kernel computes with public ops (contiguous
// copies, views, helper tensors) is plumbing, not graph; the node, if any, is recorded
// afterwards by run_op. This is the one NoGradGuard a kernel needs, so the kernels below it
// (core/cpu/, cuda/) never reach for autograd/.
void run_forward(const Op& op, Device device, const TensorList& in, TensorList& out) {
  NoGradGuard no_grad;
  if (device.is_cuda()) op.cuda(in, out);
  else op.cpu(in, out);
}

bool should_record(const TensorList& inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

void record(std::shared_ptr<Op> op, const TensorList& inputs, TensorList& outputs) {
  Save what = op->saves();
  auto node = std::make_shared<OpNode>(op);
  SavedTensors& s = node->saved();
  s.op_name_ = op->name();
  // Sized once: growing these one push_back at a time reallocated each (per-op overhead).
  s.meta_.reserve(inputs.size());
  s.needs_grad_.reserve(inputs.size());
  node->mutable_next_edges().reserve(inputs.size());
  node->input_metadata().reserve(outputs.size());
  if (what == Save::kInputs || what == Save::kBoth) s.inputs.reserve(inputs.size());
  if (what == Save::kOutputs || what == Save::kBoth) s.outputs.reserve(outputs.size());
  for (const Tensor& in : inputs) {
    s.meta_.push_back(in.defined() ? metadata_of(in) : autograd::InputMetadata{{}, kFloat, kCPU});
    s.needs_grad_.push_back(in.defined() && in.requires_grad());
    node->mutable_next_edges().push_back(in.defined() ? autograd::gradient_edge(in) : autograd::Edge{});
    if (what == Save::kInputs || what == Save::kBoth) s.inputs.emplace_back(in, false);
  }
  for (uint32_t i = 0; i < outputs.size(); ++i) {
    node->input_metadata().push_back(metadata_of(outputs[i]));
    if (differentiable_dtype(outputs[i].dtype())) autograd::set_history(outputs[i], node, i);
  }
  // Outputs are saved after set_history so that they remember their grad_fn's output_nr.
  if (what == Save::kOutputs || what == Save::kBoth)
    for (const Tensor& o : outputs) s.outputs.emplace_back(o, true);
}

void record_view(std::shared_ptr<Op> op, const Tensor& base, Tensor& view) {
  autograd::set_view_base(view, base);
  if (op) {
    TensorList outs{view};
    record(std::move(op), {base}, outs);
  }
}

/// PyTorch's assert_no_internal_overlap: an expanded tensor cannot be written in place.
/// (fill_ and zero_ write one value everywhere, which PyTorch allows.)
void check_no_internal_overlap(const Tensor& self, const char* op_name) {
  if (std::string_view(op_name) == "fill_") return;
  for (int64_t d = 0; d < self.dim(); ++d)
    EMBER_CHECK(!(self.stride(d) == 0 && self.size(d) > 1),
                "unsupported operation: more than one element of the written-to tensor refers to a "
                "single memory location. Please clone() the tensor before performing the operation.");
}

void check_inplace(const Tensor& self, const char* op_name) {
  // Autograd's leaf checks first, as PyTorch (its autograd layer runs before the kernel's
  // overlap check): an expanded view of a leaf that requires grad names the leaf.
  autograd::check_inplace(self);
  check_no_internal_overlap(self, op_name);
}

bool can_compute_in_place(const Tensor& self, const TensorList& inputs, const Op& op) {
  if (!op.elementwise()) return false;
  for (const Tensor& t : inputs) {
    if (!t.defined() || t.is_same(self)) continue;
    if (t.dtype() != self.dtype()) return false;
    if (t.is_alias_of(self) && !(t.sizes() == self.sizes() && t.strides() == self.strides() &&
                                 t.storage_offset() == self.storage_offset()))
      return false;  // partial overlap: compute out of place, then copy
  }
  for (int64_t i = 0; i < self.dim(); ++i)
    if (self.strides()[i] == 0 && self.sizes()[i] > 1) return false;
  return true;
}

/// Note [In-place ops]
/// With autograd recording, an in-place op runs out of place, its result is copied into
/// self, and self takes the result's place in the graph (PyTorch's "rebase history"). If
/// self is a view, its base is rebased instead through CopySlices (Note [View history]).
Tensor& commit_inplace(Tensor& self, const Tensor& result) {
  copy_into(self, result);
  rebase_history(self, result);
  return self;
}

void rebase_history(Tensor& self, const Tensor& result) {
  if (!result.requires_grad() || !result.grad_fn()) return;
  autograd::rebase_history(self, autograd::gradient_edge(result));
}

}  // namespace detail
}  // namespace ember
