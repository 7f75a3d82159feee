// ember::tensorboard::SummaryWriter: TensorBoard event files from a C++ training loop, as
// torch.utils.tensorboard.SummaryWriter writes them (same directory layout, file names, record
// contents and defaults), so `tensorboard --logdir runs` shows them.
//
//   #include <ember/ember.h>  // includes this header
//   ember::tensorboard::SummaryWriter writer("runs/exp1");  // or SummaryWriter(): runs/<date>_<host>
//   for (int64_t step = 0; step < steps; ++step) {
//     writer.add_scalar("loss/train", loss.item<double>(), step);
//     writer.add_scalars("loss", {{"train", train_loss}, {"val", val_loss}}, step);
//     writer.add_histogram("fc.weight", model->fc->weight, step);  // "tensorflow" bins
//   }
//   writer.add_text("notes", "lr 3e-4, batch 64", 0);
//   writer.flush();  // close() and the destructor flush too
//
// The records are protobuf messages (TensorBoard's schema, tools/tensorboard/
// tensorboard_events.proto) framed as TFRecords. Protobuf is a private dependency: this header
// needs none of it. ember builds the writer when protobuf is found (CMake option
// EMBER_TENSORBOARD=AUTO|ON|OFF); without it this class still compiles and links, and its
// constructor raises ember::Error saying so (check is_available() to skip logging instead).
//
// Events are queued and written, each record whole, when max_queue are waiting, on flush(),
// close() and destruction, and every flush_secs by a background thread. One writer may be used
// from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::tensorboard {

/// Whether this build of ember writes TensorBoard files (it was built with protobuf).
bool is_available();

/// add_histogram's `bins`, as PyTorch's: "tensorflow" (the default: exponentially spaced edges
/// +-1e-12 * 1.1^k up to 1e20, and 0), a number of equal-width bins over the values' range, or
/// the bin edges themselves. numpy's other named estimators ("auto", "fd", ...) raise.
class HistogramBins {
 public:
  HistogramBins(const char* method) : method_(method) {}
  HistogramBins(std::string method) : method_(std::move(method)) {}
  HistogramBins(int count) : count_(count) {}
  HistogramBins(int64_t count) : count_(count) {}
  HistogramBins(std::vector<double> edges) : edges_(std::move(edges)), has_edges_(true) {}

  const std::string& method() const { return method_; }  // empty unless named
  const std::optional<int64_t>& count() const { return count_; }
  const std::vector<double>* edges() const { return has_edges_ ? &edges_ : nullptr; }

 private:
  std::string method_;
  std::optional<int64_t> count_;
  std::vector<double> edges_;
  bool has_edges_ = false;
};

class SummaryWriter {
 public:
  /// log_dir: where event files go; empty: "runs/<Mon><dd>_<HH-MM-SS>_<hostname><comment>"
  /// (local time), as PyTorch. comment only applies to that default. purge_step: the run
  /// restarts at this step; TensorBoard hides the events logged at or after it before the
  /// restart. max_queue: events waiting before an add writes them (<= 1: every add writes).
  /// flush_secs: the longest an event waits (<= 0: every add writes). filename_suffix: appended
  /// to every event file name. Raises if the directory or file cannot be created, or when
  /// ember was built without protobuf.
  explicit SummaryWriter(std::string log_dir = "", std::string comment = "",
                         std::optional<int64_t> purge_step = std::nullopt, int64_t max_queue = 10,
                         double flush_secs = 120, std::string filename_suffix = "");
  ~SummaryWriter();  // close(); write errors are not raised from here (call close() to see them)
  SummaryWriter(SummaryWriter&&) noexcept;
  SummaryWriter& operator=(SummaryWriter&&) noexcept;
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  /// The directory the event files are written to.
  const std::string& get_logdir() const;

  /// One scalar under `tag` at `global_step` (absent: step 0), at `walltime` seconds since the
  /// epoch (absent: now). Stored as a float32 simple_value; new_style stores a rank-0 DT_FLOAT
  /// tensor with the "scalars" plugin (DT_DOUBLE with double_precision).
  void add_scalar(const std::string& tag, double scalar_value, std::optional<int64_t> global_step = std::nullopt,
                  std::optional<double> walltime = std::nullopt, bool new_style = false,
                  bool double_precision = false);
  /// The same for a one-element tensor (any device and dtype).
  void add_scalar(const std::string& tag, const Tensor& scalar_value,
                  std::optional<int64_t> global_step = std::nullopt, std::optional<double> walltime = std::nullopt,
                  bool new_style = false, bool double_precision = false);

  /// Several scalars in one chart: each (tag, value) goes to its own writer in the
  /// sub-directory "<log_dir>/<main_tag with '/' as '_'>_<tag>", under the tag main_tag, all at
  /// the same walltime, as PyTorch lays them out.
  void add_scalars(const std::string& main_tag, const std::vector<std::pair<std::string, double>>& tag_scalar_dict,
                   std::optional<int64_t> global_step = std::nullopt, std::optional<double> walltime = std::nullopt);

  /// The histogram of `values` (any shape, device and dtype; taken as float64). Raises for no
  /// values, or a bin count over values that are not all finite.
  void add_histogram(const std::string& tag, const Tensor& values, std::optional<int64_t> global_step = std::nullopt,
                     const HistogramBins& bins = "tensorflow", std::optional<double> walltime = std::nullopt,
                     std::optional<int64_t> max_bins = std::nullopt);
  void add_histogram(const std::string& tag, const std::vector<double>& values,
                     std::optional<int64_t> global_step = std::nullopt, const HistogramBins& bins = "tensorflow",
                     std::optional<double> walltime = std::nullopt, std::optional<int64_t> max_bins = std::nullopt);

  /// A histogram given by its statistics and buckets (bucket_limits: each bucket's right edge).
  void add_histogram_raw(const std::string& tag, double min, double max, double num, double sum, double sum_squares,
                         const std::vector<double>& bucket_limits, const std::vector<double>& bucket_counts,
                         std::optional<int64_t> global_step = std::nullopt,
                         std::optional<double> walltime = std::nullopt);

  /// Text (UTF-8, Markdown in TensorBoard's Text tab) under "<tag>/text_summary".
  void add_text(const std::string& tag, const std::string& text_string,
                std::optional<int64_t> global_step = std::nullopt, std::optional<double> walltime = std::nullopt);

  /// Writes every queued event of every file (add_scalars' too) to disk.
  void flush();
  /// Flushes and closes every file. A later add opens a new event file in the same directory,
  /// as PyTorch's does; a second close does nothing.
  void close();

 private:
  struct Impl;
  Impl& impl() const;  // raises once moved from
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember::tensorboard
