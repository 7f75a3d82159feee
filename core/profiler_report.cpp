// The profiler's reports: key_averages (events grouped by name, and by input shapes when
// asked), PyTorch's summary table of them (torch.autograd.profiler_util's layout: right-aligned
// columns two spaces apart, times as "1.234ms", memory as "4.00 KB", shares of the summed self
// CPU time), and the Chrome trace JSON ("traceEvents" of complete "X" events, in microseconds).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <unordered_map>

#include "ember/core/error.h"
#include "ember/core/profiler.h"

namespace ember::profiler {
namespace {

/// Python's str() of a list of shapes: "[[2, 3], []]".
std::string shapes_str(const std::vector<std::vector<int64_t>>& shapes) {
  std::string out = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) out += ", ";
    out += '[';
    for (size_t j = 0; j < shapes[i].size(); ++j) {
      if (j) out += ", ";
      out += std::to_string(shapes[i][j]);
    }
    out += ']';
  }
  return out + "]";
}

std::string printf_str(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

/// PyTorch's _format_time, from nanoseconds.
std::string format_time(double ns) {
  double us = ns / 1000.0;
  if (us >= 1e6) return printf_str("%.3fs", us / 1e6);
  if (us >= 1e3) return printf_str("%.3fms", us / 1e3);
  return printf_str("%.3fus", us);
}

/// PyTorch's _format_time_share.
std::string format_share(int64_t part, int64_t total) {
  if (total == 0) return "NaN";
  return printf_str("%.2f%%", double(part) * 100.0 / double(total));
}

/// PyTorch's _format_memory.
std::string format_memory(int64_t nbytes) {
  const double kb = 1024.0, mb = kb * 1024.0, gb = mb * 1024.0;
  double a = std::abs(double(nbytes));
  if (a >= gb) return printf_str("%.2f GB", double(nbytes) / gb);
  if (a >= mb) return printf_str("%.2f MB", double(nbytes) / mb);
  if (a >= kb) return printf_str("%.2f KB", double(nbytes) / kb);
  return std::to_string(nbytes) + " B";
}

/// The sort key of a table column, by PyTorch's attribute names ("cuda" read as "device").
std::function<double(const FunctionEventAvg&)> sort_key(std::string key) {
  for (size_t p; (p = key.find("cuda")) != std::string::npos;) key.replace(p, 4, "device");
  using A = const FunctionEventAvg&;
  static const std::pair<const char*, double (*)(A)> keys[] = {
      {"cpu_time_total", [](A e) { return double(e.cpu_time_total_ns); }},
      {"self_cpu_time_total", [](A e) { return double(e.self_cpu_time_total_ns); }},
      {"cpu_time", [](A e) { return e.cpu_time_avg_ns(); }},
      {"device_time_total", [](A e) { return double(e.device_time_total_ns); }},
      {"self_device_time_total", [](A e) { return double(e.self_device_time_total_ns); }},
      {"device_time", [](A e) { return e.device_time_avg_ns(); }},
      {"cpu_memory_usage", [](A e) { return double(e.cpu_memory_usage); }},
      {"self_cpu_memory_usage", [](A e) { return double(e.self_cpu_memory_usage); }},
      {"device_memory_usage", [](A e) { return double(e.device_memory_usage); }},
      {"self_device_memory_usage", [](A e) { return double(e.self_device_memory_usage); }},
      {"count", [](A e) { return double(e.count); }},
  };
  for (const auto& [name, fn] : keys)
    if (key == name) return fn;
  ember::detail::throw_error("table(): unknown sort_by key '" + key +
                             "'; expected cpu_time_total, self_cpu_time_total, cpu_time, cuda_time_total, "
                             "self_cuda_time_total, cuda_time, cpu_memory_usage, self_cpu_memory_usage, "
                             "cuda_memory_usage, self_cuda_memory_usage or count");
}

/// Right-aligned columns separated by two spaces, as PyTorch's row_format.
class Rows {
 public:
  void add_column(size_t width) { widths_.push_back(width); }
  void separator(std::ostringstream& os) const {
    for (size_t w : widths_) os << std::string(w, '-') << "  ";
    os << '\n';
  }
  void row(std::ostringstream& os, const std::vector<std::string>& cells) const {
    for (size_t i = 0; i < cells.size(); ++i) {
      if (cells[i].size() < widths_[i]) os << std::string(widths_[i] - cells[i].size(), ' ');
      os << cells[i] << "  ";
    }
    os << '\n';
  }

 private:
  std::vector<size_t> widths_;
};

void json_string(std::ostringstream& os, const std::string& s) {
  os << '"';
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') os << '\\' << c;
    else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      os << buf;
    } else {
      os << c;
    }
  }
  os << '"';
}

/// Microseconds with three decimals (the trace's unit; the clock counts nanoseconds).
std::string us(int64_t ns) { return printf_str("%.3f", double(ns) / 1000.0); }

void json_shapes(std::ostringstream& os, const std::vector<std::vector<int64_t>>& shapes) {
  os << shapes_str(shapes);  // Python's list syntax is JSON's too
}

}  // namespace

KeyAverages key_averages(const std::vector<FunctionEvent>& events, bool group_by_input_shape, bool profile_memory,
                         bool use_cuda) {
  std::vector<FunctionEventAvg> groups;
  std::unordered_map<std::string, size_t> index;
  for (const FunctionEvent& e : events) {
    std::string key = e.name;
    if (group_by_input_shape) key += '\0' + shapes_str(e.input_shapes);
    auto [it, fresh] = index.emplace(std::move(key), groups.size());
    if (fresh) {
      groups.emplace_back();
      groups.back().key = e.name;
      if (group_by_input_shape) groups.back().input_shapes = e.input_shapes;
    }
    FunctionEventAvg& g = groups[it->second];
    g.count += 1;
    g.cpu_time_total_ns += e.cpu_time_total_ns();
    g.self_cpu_time_total_ns += e.self_cpu_time_ns;
    g.device_time_total_ns += e.device_time_ns;
    g.self_device_time_total_ns += e.self_device_time_ns;
    g.cpu_memory_usage += e.cpu_memory_usage;
    g.self_cpu_memory_usage += e.self_cpu_memory_usage;
    g.device_memory_usage += e.device_memory_usage;
    g.self_device_memory_usage += e.self_device_memory_usage;
  }
  return KeyAverages(std::move(groups), profile_memory, use_cuda);
}

const FunctionEventAvg* KeyAverages::find(std::string_view key) const {
  for (const FunctionEventAvg& g : groups_)
    if (g.key == key) return &g;
  return nullptr;
}

std::string KeyAverages::table(std::string_view sort_by, int64_t row_limit, int64_t max_name_column_width,
                               int64_t max_shapes_column_width) const {
  if (groups_.empty()) return "";
  std::vector<const FunctionEventAvg*> rows;
  for (const FunctionEventAvg& g : groups_) rows.push_back(&g);
  if (!sort_by.empty()) {
    auto key = sort_key(std::string(sort_by));
    std::stable_sort(rows.begin(), rows.end(), [&](auto* a, auto* b) { return key(*a) > key(*b); });
  }
  bool has_device_time = false, has_device_mem = false, has_shapes = false;
  size_t name_width = 0, shapes_width = 0;
  int64_t sum_self_cpu = 0, sum_self_device = 0;
  for (const FunctionEventAvg& g : groups_) {
    has_device_time = has_device_time || (use_cuda_ && g.self_device_time_total_ns > 0);
    has_device_mem = has_device_mem || g.self_device_memory_usage > 0;
    has_shapes = has_shapes || !g.input_shapes.empty();
    name_width = std::max(name_width, g.key.size() + 4);
    shapes_width = std::max(shapes_width, shapes_str(g.input_shapes).size() + 4);
    sum_self_cpu += g.self_cpu_time_total_ns;
    sum_self_device += g.self_device_time_total_ns;
  }
  const size_t max_name = static_cast<size_t>(max_name_column_width);
  name_width = std::min(name_width, max_name);
  shapes_width = std::min(shapes_width, static_cast<size_t>(max_shapes_column_width));

  std::vector<std::string> headers = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (has_device_time) headers.insert(headers.end(), {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"});
  if (profile_memory_) {
    headers.insert(headers.end(), {"CPU Mem", "Self CPU Mem"});
    if (use_cuda_ && has_device_mem) headers.insert(headers.end(), {"CUDA Mem", "Self CUDA Mem"});
  }
  headers.push_back("# of Calls");
  Rows layout;
  layout.add_column(name_width);
  for (size_t i = 1; i < headers.size(); ++i) layout.add_column(12);
  if (has_shapes) {
    headers.push_back("Input Shapes");
    layout.add_column(shapes_width);
  }

  std::ostringstream os;
  layout.separator(os);
  layout.row(os, headers);
  layout.separator(os);
  int64_t shown = 0;
  for (const FunctionEventAvg* g : rows) {
    if (shown++ == row_limit) break;
    std::string name = g->key;
    if (name.size() + 3 >= max_name) name = name.substr(0, max_name - 3) + "...";
    std::vector<std::string> cells = {name,
                                      format_share(g->self_cpu_time_total_ns, sum_self_cpu),
                                      format_time(double(g->self_cpu_time_total_ns)),
                                      format_share(g->cpu_time_total_ns, sum_self_cpu),
                                      format_time(double(g->cpu_time_total_ns)),
                                      format_time(g->cpu_time_avg_ns())};
    if (has_device_time)
      cells.insert(cells.end(), {format_time(double(g->self_device_time_total_ns)),
                                 format_share(g->self_device_time_total_ns, sum_self_device),
                                 format_time(double(g->device_time_total_ns)), format_time(g->device_time_avg_ns())});
    if (profile_memory_) {
      cells.insert(cells.end(), {format_memory(g->cpu_memory_usage), format_memory(g->self_cpu_memory_usage)});
      if (use_cuda_ && has_device_mem)
        cells.insert(cells.end(), {format_memory(g->device_memory_usage), format_memory(g->self_device_memory_usage)});
    }
    cells.push_back(std::to_string(g->count));
    if (has_shapes) cells.push_back(shapes_str(g->input_shapes).substr(0, shapes_width));
    layout.row(os, cells);
  }
  layout.separator(os);
  os << "Self CPU time total: " << format_time(double(sum_self_cpu)) << '\n';
  if (has_device_time) os << "Self CUDA time total: " << format_time(double(sum_self_device)) << '\n';
  return os.str();
}

std::string chrome_trace_json(const std::vector<FunctionEvent>& events) {
  const long pid = static_cast<long>(::getpid());
  std::ostringstream os;
  os << "{\n  \"schemaVersion\": 1,\n  \"displayTimeUnit\": \"ms\",\n  \"traceEvents\": [\n";
  os << "    {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << pid
     << ", \"tid\": 0, \"args\": {\"name\": \"ember\"}}";
  std::vector<int> devices;
  for (size_t i = 0; i < events.size(); ++i) {
    const FunctionEvent& e = events[i];
    os << ",\n    {\"ph\": \"X\", \"cat\": \"" << (e.kind == EventKind::kUserAnnotation ? "user_annotation" : "cpu_op")
       << "\", \"name\": ";
    json_string(os, e.name);
    os << ", \"pid\": " << pid << ", \"tid\": " << e.thread_id << ", \"ts\": " << us(e.start_ns)
       << ", \"dur\": " << us(e.cpu_time_total_ns()) << ", \"args\": {\"External id\": " << i;
    if (!e.input_shapes.empty()) {
      os << ", \"Input Dims\": ";
      json_shapes(os, e.input_shapes);
      os << ", \"Input type\": [";
      for (size_t j = 0; j < e.input_types.size(); ++j) {
        if (j) os << ", ";
        json_string(os, e.input_types[j]);
      }
      os << ']';
    }
    if (e.device_start_ns >= 0) os << ", \"device\": " << e.device_index << ", \"device_duration_us\": " << us(e.device_time_ns);
    os << "}}";
    // The device side of a CUDA op: its event-to-event span on the GPU's own row.
    if (e.device_start_ns >= 0) {
      if (std::find(devices.begin(), devices.end(), e.device_index) == devices.end()) devices.push_back(e.device_index);
      os << ",\n    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ";
      json_string(os, e.name);
      os << ", \"pid\": " << e.device_index << ", \"tid\": 0, \"ts\": " << us(e.device_start_ns)
         << ", \"dur\": " << us(e.device_time_ns) << ", \"args\": {\"External id\": " << i
         << ", \"device\": " << e.device_index << "}}";
    }
  }
  for (int d : devices)
    os << ",\n    {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << d << ", \"tid\": 0, \"args\": {\"name\": \"CUDA "
       << d << "\"}}";
  os << "\n  ]\n}\n";
  return os.str();
}

}  // namespace ember::profiler
