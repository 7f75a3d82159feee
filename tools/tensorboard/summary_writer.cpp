// SummaryWriter (summary_writer.h): PyTorch's SummaryWriter/FileWriter logic over
// EventFileWriter, with the records built by event_encoding.h.
#include "ember/tools/tensorboard/summary_writer.h"

#include <ctime>
#include <mutex>

#include "ember/core/error.h"
#include "ember/tools/tensorboard/event_encoding.h"
#include "ember/tools/tensorboard/event_file_writer.h"
#include "ember/tools/tensorboard/histogram.h"

namespace ember::tensorboard {

using detail::EventFileWriter;
using detail::EventHeader;

bool is_available() { return detail::protobuf_available(); }

namespace {

// PyTorch's default: os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" +
// socket.gethostname() + comment).
std::string default_log_dir(const std::string& comment) {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[64];
  std::strftime(stamp, sizeof(stamp), "%b%d_%H-%M-%S", &local);
  return "runs/" + std::string(stamp) + "_" + detail::hostname() + comment;
}

std::vector<double> to_double_values(const Tensor& values) {
  EMBER_CHECK(values.defined(), "add_histogram: values is an undefined tensor");
  Tensor t = values.detach().to(Device(kCPU), kDouble).contiguous();
  const double* p = t.data_ptr<double>();
  return {p, p + t.numel()};
}

std::string replace_all(std::string s, char from, char to) {
  for (char& c : s)
    if (c == from) c = to;
  return s;
}

}  // namespace

struct SummaryWriter::Impl {
  std::string log_dir;
  std::optional<int64_t> purge_step;
  int64_t max_queue;
  double flush_secs;
  std::string filename_suffix;

  std::mutex mu;
  // PyTorch's all_writers: the main writer first, then add_scalars' writers by log dir. Empty
  // once closed; the next add reopens (a new event file).
  std::vector<std::unique_ptr<EventFileWriter>> writers;

  // FileWriter's constructor: a new file whose first record is the file version.
  std::unique_ptr<EventFileWriter> open_writer(const std::string& dir) {
    auto w = std::make_unique<EventFileWriter>(dir, max_queue, flush_secs, filename_suffix);
    w->add_event(detail::file_version_event({detail::wall_time_now(), std::nullopt}));
    w->flush();
    return w;
  }

  // PyTorch's _get_file_writer (mu held).
  EventFileWriter& main_writer() {
    if (writers.empty()) {
      writers.push_back(open_writer(log_dir));
      if (purge_step) {
        // The purge marker: a file version and a SessionLog START at the restart step.
        writers[0]->add_event(detail::file_version_event({detail::wall_time_now(), *purge_step}));
        writers[0]->add_event(detail::session_start_event({detail::wall_time_now(), *purge_step}));
        purge_step.reset();
      }
    }
    return *writers[0];
  }

  EventFileWriter& writer_for(const std::string& dir) {
    main_writer();
    for (auto& w : writers)
      if (w->log_dir() == dir) return *w;
    writers.push_back(open_writer(dir));
    return *writers.back();
  }

  static EventHeader header(std::optional<int64_t> step, std::optional<double> walltime) {
    return {walltime ? *walltime : detail::wall_time_now(), step};
  }
};

SummaryWriter::SummaryWriter(std::string log_dir, std::string comment, std::optional<int64_t> purge_step,
                             int64_t max_queue, double flush_secs, std::string filename_suffix) {
  detail::require_protobuf();
  impl_ = std::make_unique<Impl>();
  Impl& d = *impl_;
  d.log_dir = log_dir.empty() ? default_log_dir(comment) : std::move(log_dir);
  d.purge_step = purge_step;
  d.max_queue = max_queue;
  d.flush_secs = flush_secs;
  d.filename_suffix = std::move(filename_suffix);
  std::lock_guard<std::mutex> lock(d.mu);
  d.main_writer();
}

SummaryWriter::~SummaryWriter() {
  try {
    close();
  } catch (const std::exception&) {
    // Not raised from a destructor; close() reports it to callers who ask.
  }
}

SummaryWriter::SummaryWriter(SummaryWriter&&) noexcept = default;
SummaryWriter& SummaryWriter::operator=(SummaryWriter&& other) noexcept {
  if (this != &other) {
    try {
      close();
    } catch (const std::exception&) {
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}

SummaryWriter::Impl& SummaryWriter::impl() const {
  EMBER_CHECK(impl_ != nullptr, "SummaryWriter: used after being moved from");
  return *impl_;
}

const std::string& SummaryWriter::get_logdir() const {
  return impl().log_dir;
}

void SummaryWriter::add_scalar(const std::string& tag, double scalar_value, std::optional<int64_t> global_step,
                               std::optional<double> walltime, bool new_style, bool double_precision) {
  Impl& d = impl();
  std::string event =
      detail::scalar_event(Impl::header(global_step, walltime), tag, scalar_value, new_style, double_precision);
  std::lock_guard<std::mutex> lock(d.mu);
  d.main_writer().add_event(std::move(event));
}

void SummaryWriter::add_scalar(const std::string& tag, const Tensor& scalar_value,
                               std::optional<int64_t> global_step, std::optional<double> walltime, bool new_style,
                               bool double_precision) {
  EMBER_CHECK(scalar_value.defined(), "add_scalar: scalar_value is an undefined tensor");
  EMBER_CHECK(scalar_value.numel() == 1, "Tensor should contain one element (0 dimensions). Was given size: ",
              scalar_value.numel(), " and ", scalar_value.dim(), " dimensions.");
  add_scalar(tag, scalar_value.detach().to(Device(kCPU), kDouble).item<double>(), global_step, walltime, new_style,
             double_precision);
}

void SummaryWriter::add_scalars(const std::string& main_tag,
                                const std::vector<std::pair<std::string, double>>& tag_scalar_dict,
                                std::optional<int64_t> global_step, std::optional<double> walltime) {
  Impl& d = impl();
  const EventHeader header = Impl::header(global_step, walltime);  // one walltime for all
  std::lock_guard<std::mutex> lock(d.mu);
  const std::string fw_logdir = d.main_writer().log_dir();
  for (const auto& [tag, value] : tag_scalar_dict) {
    const std::string dir = fw_logdir + "/" + replace_all(main_tag, '/', '_') + "_" + tag;
    d.writer_for(dir).add_event(detail::scalar_event(header, main_tag, value));
  }
}

void SummaryWriter::add_histogram(const std::string& tag, const Tensor& values, std::optional<int64_t> global_step,
                                  const HistogramBins& bins, std::optional<double> walltime,
                                  std::optional<int64_t> max_bins) {
  add_histogram(tag, to_double_values(values), global_step, bins, walltime, max_bins);
}

void SummaryWriter::add_histogram(const std::string& tag, const std::vector<double>& values,
                                  std::optional<int64_t> global_step, const HistogramBins& bins,
                                  std::optional<double> walltime, std::optional<int64_t> max_bins) {
  Impl& d = impl();
  EMBER_CHECK(!values.empty(), "The input has no element.");
  std::vector<double> edges;
  if (const std::vector<double>* given = bins.edges()) {
    edges = *given;
  } else if (bins.count()) {
    edges = detail::uniform_bin_edges(values, *bins.count());
  } else {
    EMBER_CHECK(bins.method() == "tensorflow", "add_histogram: bins=\"", bins.method(),
                "\" is not supported; use \"tensorflow\", a number of bins, or the bin edges");
    edges = detail::tensorflow_bins();
  }
  const detail::HistogramData histogram = detail::make_histogram(values, edges, max_bins);
  std::string event = detail::histogram_event(Impl::header(global_step, walltime), tag, histogram);
  std::lock_guard<std::mutex> lock(d.mu);
  d.main_writer().add_event(std::move(event));
}

void SummaryWriter::add_histogram_raw(const std::string& tag, double min, double max, double num, double sum,
                                      double sum_squares, const std::vector<double>& bucket_limits,
                                      const std::vector<double>& bucket_counts, std::optional<int64_t> global_step,
                                      std::optional<double> walltime) {
  Impl& d = impl();
  EMBER_CHECK(bucket_limits.size() == bucket_counts.size(),
              "len(bucket_limits) != len(bucket_counts), see the document.");
  detail::HistogramData h{min, max, num, sum, sum_squares, bucket_limits, bucket_counts};
  std::string event = detail::histogram_event(Impl::header(global_step, walltime), tag, h);
  std::lock_guard<std::mutex> lock(d.mu);
  d.main_writer().add_event(std::move(event));
}

void SummaryWriter::add_text(const std::string& tag, const std::string& text_string,
                             std::optional<int64_t> global_step, std::optional<double> walltime) {
  Impl& d = impl();
  std::string event = detail::text_event(Impl::header(global_step, walltime), tag, text_string);
  std::lock_guard<std::mutex> lock(d.mu);
  d.main_writer().add_event(std::move(event));
}

void SummaryWriter::flush() {
  Impl& d = impl();
  std::lock_guard<std::mutex> lock(d.mu);
  for (auto& w : d.writers) w->flush();
}

void SummaryWriter::close() {
  if (!impl_) return;  // moved from: nothing to close
  Impl& d = *impl_;
  std::lock_guard<std::mutex> lock(d.mu);
  // Every file is closed even when one fails; the first failure is raised after.
  std::optional<Error> first_error;
  for (auto& w : d.writers) {
    try {
      w->close();
    } catch (const Error& e) {
      if (!first_error) first_error = e;
    }
  }
  d.writers.clear();
  if (first_error) throw *first_error;
}

}  // namespace ember::tensorboard
