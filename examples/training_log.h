// What the Fashion-MNIST trainer shows and writes while it runs: a progress bar for the
// running epoch, metrics.csv with one row per epoch, and metrics.svg, a plot of loss and
// accuracy per epoch that any browser opens. Header-only; uses the standard library only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace trainer {

/// One epoch's numbers, as logged, written to metrics.csv and plotted.
struct EpochMetrics {
  int epoch = 0;
  double train_loss = 0, train_acc = 0, val_loss = 0, val_acc = 0, lr = 0, seconds = 0;
};

/// A one-line progress bar redrawn in place on a terminal: batches done, samples/s, ETA and
/// the running loss. Off a terminal (CI logs, pipes) it stays silent, so logs hold only the
/// per-epoch lines.
class ProgressBar {
 public:
  /// Draws only on a terminal, and only when `show` (rank 0 of a data-parallel run).
  ProgressBar(int epoch, int epochs, int64_t batches, bool show = true)
      : epoch_(epoch), epochs_(epochs), batches_(batches), start_(Clock::now()),
        enabled_(show && isatty(fileno(stderr)) != 0) {}

  void update(int64_t batches_done, int64_t samples_done, double running_loss) {
    if (!enabled_) return;
    auto now = Clock::now();
    // Redraw at most ~10 times a second: printing is not free and flickers.
    if (batches_done != batches_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    double rate = secs > 0 ? samples_done / secs : 0;
    double eta = batches_done > 0 ? secs * (batches_ - batches_done) / batches_done : 0;
    constexpr int kWidth = 28;
    int filled = static_cast<int>(kWidth * batches_done / std::max<int64_t>(batches_, 1));
    std::string bar(filled, '=');
    if (filled < kWidth) bar += '>' + std::string(kWidth - filled - 1, ' ');
    std::fprintf(stderr, "\repoch %d/%d [%s] %lld/%lld | %.0f samples/s | ETA %d:%02d | loss %.4f ",
                 epoch_, epochs_, bar.c_str(), static_cast<long long>(batches_done),
                 static_cast<long long>(batches_), rate, static_cast<int>(eta) / 60,
                 static_cast<int>(eta) % 60, running_loss);
    std::fflush(stderr);
  }

  /// Clears the bar so the epoch's summary line replaces it.
  void finish() {
    if (enabled_) std::fprintf(stderr, "\r%*s\r", 110, "");
  }

 private:
  using Clock = std::chrono::steady_clock;
  int epoch_, epochs_;
  int64_t batches_;
  Clock::time_point start_, last_draw_{};
  bool enabled_;
};

inline void write_metrics_csv(const std::string& path, const std::vector<EpochMetrics>& rows) {
  std::ofstream out(path);
  out << "epoch,train_loss,train_acc,val_loss,val_acc,lr,seconds\n";
  char line[256];
  for (const EpochMetrics& m : rows) {
    std::snprintf(line, sizeof line, "%d,%.6f,%.6f,%.6f,%.6f,%.8g,%.3f\n", m.epoch, m.train_loss,
                  m.train_acc, m.val_loss, m.val_acc, m.lr, m.seconds);
    out << line;
  }
}

namespace svg_detail {

/// One panel: a line per series over epochs 1..n, y axis from the data's range.
struct Series {
  std::string name, color;
  std::vector<double> ys;
};

inline std::string panel(double x0, double y0, double w, double h, const std::string& title,
                         const std::vector<Series>& series, int epochs) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Series& s : series)
    for (double v : s.ys)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(lo <= hi)) lo = 0, hi = 1;
  if (hi - lo < 1e-9) lo -= 0.5, hi += 0.5;
  double pad = 0.05 * (hi - lo);
  lo -= pad, hi += pad;
  auto px = [&](int epoch) { return x0 + 50 + (w - 70) * (epochs > 1 ? (epoch - 1.0) / (epochs - 1) : 0.5); };
  auto py = [&](double v) { return y0 + 30 + (h - 60) * (1 - (v - lo) / (hi - lo)); };
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof buf,
                "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='white' stroke='#ccc'/>\n"
                "<text x='%.1f' y='%.1f' font-size='14' font-weight='bold'>%s</text>\n",
                x0, y0, w, h, x0 + 10, y0 + 20, title.c_str());
  out += buf;
  for (int t = 0; t <= 4; ++t) {  // y ticks
    double v = lo + (hi - lo) * t / 4;
    std::snprintf(buf, sizeof buf,
                  "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#eee'/>"
                  "<text x='%.1f' y='%.1f' font-size='10' text-anchor='end'>%.3f</text>\n",
                  px(1) - 5, x0 + w - 15, py(v), py(v), x0 + 45, py(v) + 3, v);
    out += buf;
  }
  for (int e = 1; e <= epochs; ++e) {  // x ticks
    std::snprintf(buf, sizeof buf, "<text x='%.1f' y='%.1f' font-size='10' text-anchor='middle'>%d</text>\n",
                  px(e), y0 + h - 12, e);
    out += buf;
  }
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    std::string points;
    for (size_t i = 0; i < s.ys.size(); ++i) {
      if (!std::isfinite(s.ys[i])) continue;
      std::snprintf(buf, sizeof buf, "%.1f,%.1f ", px(static_cast<int>(i) + 1), py(s.ys[i]));
      points += buf;
      std::snprintf(buf, sizeof buf, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n",
                    px(static_cast<int>(i) + 1), py(s.ys[i]), s.color.c_str());
      out += buf;
    }
    out += "<polyline fill='none' stroke-width='2' stroke='" + s.color + "' points='" + points + "'/>\n";
    std::snprintf(buf, sizeof buf, "<text x='%.1f' y='%.1f' font-size='12' fill='%s'>%s</text>\n",
                  x0 + w - 150, y0 + 20 + 15.0 * k, s.color.c_str(), s.name.c_str());
    out += buf;
  }
  return out;
}

}  // namespace svg_detail

/// Writes an SVG with two panels — loss and accuracy (%) per epoch, train and validation.
inline void write_metrics_svg(const std::string& path, const std::vector<EpochMetrics>& rows) {
  using svg_detail::Series;
  Series train_loss{"train loss", "#1f77b4", {}}, val_loss{"validation loss", "#ff7f0e", {}};
  Series train_acc{"train accuracy", "#1f77b4", {}}, val_acc{"validation accuracy", "#ff7f0e", {}};
  for (const EpochMetrics& m : rows) {
    train_loss.ys.push_back(m.train_loss);
    val_loss.ys.push_back(m.val_loss);
    train_acc.ys.push_back(100 * m.train_acc);
    val_acc.ys.push_back(100 * m.val_acc);
  }
  int epochs = static_cast<int>(rows.size());
  std::ofstream out(path);
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='900' height='340' font-family='sans-serif'>\n";
  out << svg_detail::panel(0, 0, 445, 330, "loss", {train_loss, val_loss}, epochs);
  out << svg_detail::panel(455, 0, 445, 330, "accuracy (%)", {train_acc, val_acc}, epochs);
  out << "<text x='450' y='338' font-size='11' text-anchor='middle'>epoch</text>\n</svg>\n";
}

}  // namespace trainer
