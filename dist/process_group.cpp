// Work's completion protocol and the names of ReduceOp (dist/process_group.h).
#include "ember/dist/process_group.h"

#include <utility>

namespace ember::dist {

const char* reduce_op_name(ReduceOp op) {
  switch (op.op_) {
    case ReduceOp::SUM:
      return "SUM";
    case ReduceOp::AVG:
      return "AVG";
    case ReduceOp::PRODUCT:
      return "PRODUCT";
    case ReduceOp::MIN:
      return "MIN";
    case ReduceOp::MAX:
      return "MAX";
    case ReduceOp::BAND:
      return "BAND";
    case ReduceOp::BOR:
      return "BOR";
    case ReduceOp::BXOR:
      return "BXOR";
  }
  return "UNKNOWN";
}

Work::Work(int rank, std::vector<Tensor> outputs) : rank_(rank), outputs_(std::move(outputs)) {}

bool Work::is_completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_;
}

bool Work::is_success() {
  std::lock_guard<std::mutex> lock(mutex_);
  EMBER_CHECK(completed_, "Work::is_success: the operation has not completed yet");
  return error_ == nullptr;
}

bool Work::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (timeout == kNoTimeout) {
    cv_.wait(lock, [this] { return completed_; });
  } else if (!cv_.wait_for(lock, timeout, [this] { return completed_; })) {
    ::ember::detail::throw_error("Operation timed out!");
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

std::exception_ptr Work::exception() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

std::vector<Tensor> Work::result() { return outputs_; }

int Work::source_rank() const { return rank_; }

void Work::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completed_ = true;
    error_ = std::move(error);
  }
  cv_.notify_all();
}

ProcessGroup::ProcessGroup(int rank, int size) : rank_(rank), size_(size) {
  EMBER_CHECK(size > 0, "Invalid world size: ", size);
  EMBER_CHECK(rank >= 0 && rank < size, "Invalid rank ", rank, " for world size ", size);
}

}  // namespace ember::dist
