// safetensors reading and writing. Layout: an 8-byte little-endian header length N, N bytes
// of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}
// (padded with spaces), then the data buffer the tensors tile exactly. The JSON reader
// (core/safetensors_json.cpp) accepts exactly what safetensors writes (objects, arrays,
// strings, integers) and nothing else; every offset, shape and dtype is validated before any
// tensor memory is touched.
// Errors name the file and the class of fault with the Rust `safetensors` crate's
// SafeTensorError variant names (HeaderTooSmall, InvalidOffset, ...), so a message can be
// matched to the reference implementation's behaviour.
#include "ember/core/serialize.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <numeric>

#include "ember/autograd/grad_mode.h"
#include "ember/core/atomic_file.h"
#include "ember/core/ops/creation.h"
#include "ember/core/safetensors_json.h"

namespace ember {

// safetensors is little-endian; ember writes and reads raw memory, so it needs a host that is too.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

namespace {

using detail::safetensors::bad_file;
using detail::safetensors::invalid_utf8_at;
using detail::safetensors::Json;
using detail::safetensors::kDeser;
using detail::safetensors::parse_json_header;
using detail::safetensors::write_json_string;

constexpr uint64_t kMaxHeaderBytes = 100u * 1000u * 1000u;  // safetensors' own limit

// ---- dtypes ----------------------------------------------------------------------------

struct DtypeName {
  const char* name;
  ScalarType type;
};
constexpr DtypeName kDtypes[] = {{"BOOL", kBool}, {"U8", kByte},   {"I8", kChar},  {"I16", kShort},
                                 {"I32", kInt},   {"I64", kLong},  {"F16", kHalf}, {"BF16", kBFloat16},
                                 {"F32", kFloat}, {"F64", kDouble}};
// Valid safetensors dtypes ember has no tensor type for: named as such, not as garbage.
constexpr const char* kUnsupportedDtypes[] = {"U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "C64"};

const char* safetensors_dtype(ScalarType t) {
  for (const DtypeName& d : kDtypes)
    if (d.type == t) return d.name;
  detail::throw_error(detail::str_cat("safetensors: cannot save a tensor of dtype ", t));
}

// ---- the header ---------------------------------------------------------------------

struct Entry {
  std::string name;
  ScalarType dtype = kFloat;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte range within the data buffer
};

struct Header {
  std::vector<Entry> entries;  // header order
  SafetensorsMetadata metadata;
};

const Json* field(const Json& obj, const char* key) {
  for (const auto& kv : obj.obj)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

std::vector<int64_t> int_list(const Json* v, const std::string& file, const std::string& tensor,
                              const char* what) {
  if (v == nullptr) bad_file(file, kDeser, detail::str_cat("tensor '", tensor, "' has no \"", what, "\""));
  if (v->kind != Json::kArray)
    bad_file(file, kDeser,
             detail::str_cat("\"", what, "\" of tensor '", tensor, "' must be a list of integers"));
  std::vector<int64_t> out;
  for (const Json& x : v->arr) {
    if (x.kind != Json::kInt || x.num < 0)
      bad_file(file, kDeser,
               detail::str_cat("\"", what, "\" of tensor '", tensor, "' must hold non-negative integers"));
    out.push_back(x.num);
  }
  return out;
}

Entry parse_entry(const std::string& tensor, const Json& v, const std::string& file) {
  if (v.kind != Json::kObject)
    bad_file(file, kDeser, detail::str_cat("the entry of tensor '", tensor, "' must be an object"));
  for (const auto& kv : v.obj)
    if (kv.key != "dtype" && kv.key != "shape" && kv.key != "data_offsets")
      bad_file(file, kDeser, detail::str_cat("unexpected field '", kv.key, "' in tensor '", tensor, "'"));
  Entry e;
  e.name = tensor;
  const Json* dt = field(v, "dtype");
  if (dt == nullptr || dt->kind != Json::kString)
    bad_file(file, kDeser, detail::str_cat("tensor '", tensor, "' needs a string \"dtype\""));
  bool found = false;
  for (const DtypeName& d : kDtypes)
    if (dt->str == d.name) e.dtype = d.type, found = true;
  if (!found) {
    for (const char* u : kUnsupportedDtypes)
      if (dt->str == u)
        bad_file(file, detail::str_cat("dtype '", u, "' of tensor '", tensor, "' is not supported by ember"));
    bad_file(file, kDeser, detail::str_cat("unknown dtype '", dt->str, "' for tensor '", tensor, "'"));
  }
  e.shape = int_list(field(v, "shape"), file, tensor, "shape");
  std::vector<int64_t> off = int_list(field(v, "data_offsets"), file, tensor, "data_offsets");
  if (off.size() != 2)
    bad_file(file, kDeser, detail::str_cat("\"data_offsets\" of tensor '", tensor, "' must be [begin, end]"));
  e.begin = static_cast<uint64_t>(off[0]);
  e.end = static_cast<uint64_t>(off[1]);
  if (e.begin > e.end)
    bad_file(file, "InvalidOffset",
             detail::str_cat("tensor '", tensor, "' has data_offsets [", e.begin, ", ", e.end,
                             "] with begin > end"));
  // extent (the product of the non-zero sizes) bounds the strides, which must fit in int64
  // even when a zero size makes the tensor empty.
  uint64_t bytes = element_size(e.dtype), extent = 1;
  for (int64_t d : e.shape)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) ||
        __builtin_mul_overflow(extent, static_cast<uint64_t>(std::max<int64_t>(d, 1)), &extent) ||
        extent > static_cast<uint64_t>(INT64_MAX))
      bad_file(file, "ValidationOverflow",
               detail::str_cat("the shape of tensor '", tensor,
                               "' is too large: its byte size overflows 64 bits"));
  if (bytes != e.end - e.begin)
    bad_file(file, "TensorInvalidInfo",
             detail::str_cat("tensor '", tensor, "' of dtype ", dt->str, " and shape ", IntArrayRef(e.shape),
                             " needs ", bytes, " bytes but its data_offsets span ", e.end - e.begin));
  return e;
}

// safetensors requires the tensors to tile the data buffer exactly: no overlap, no holes.
void check_tiling(const std::vector<Entry>& entries, uint64_t buffer_size, const std::string& file) {
  std::vector<size_t> order(entries.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(entries[a].begin, entries[a].end) < std::pair(entries[b].begin, entries[b].end);
  });
  uint64_t pos = 0;
  const Entry* prev = nullptr;
  for (size_t i : order) {
    const Entry& e = entries[i];
    if (e.end > buffer_size)
      bad_file(file, "MetadataIncompleteBuffer",
               detail::str_cat("data_offsets [", e.begin, ", ", e.end, "] of tensor '", e.name,
                               "' are out of range: the data buffer has ", buffer_size, " bytes"));
    if (e.begin < pos)
      bad_file(file, "InvalidOffset",
               detail::str_cat("tensors '", prev->name, "' and '", e.name, "' overlap in the data buffer"));
    if (e.begin > pos)
      bad_file(file, "InvalidOffset",
               detail::str_cat("bytes [", pos, ", ", e.begin,
                               ") of the data buffer belong to no tensor (before '", e.name, "')"));
    pos = e.end;
    prev = &e;
  }
  if (pos != buffer_size)
    bad_file(file, "MetadataIncompleteBuffer",
             detail::str_cat("the data buffer has ", buffer_size, " bytes but the tensors cover ", pos,
                             " (trailing bytes after the data)"));
}

Header parse_header(const char* text, size_t n, uint64_t buffer_size, const std::string& file) {
  size_t bad = invalid_utf8_at(reinterpret_cast<const uint8_t*>(text), n);
  if (bad != n)
    bad_file(file, "InvalidHeader", detail::str_cat("the header is not valid UTF-8 (at byte ", bad, ")"));
  Json doc = parse_json_header(text, n, file);
  Header h;
  for (const auto& [key, value] : doc.obj) {
    if (key == "__metadata__") {
      if (value.kind != Json::kObject)
        bad_file(file, kDeser, "\"__metadata__\" must be an object of strings");
      for (const auto& [mk, mv] : value.obj) {
        if (mv.kind != Json::kString)
          bad_file(file, kDeser, detail::str_cat("metadata value for key '", mk, "' must be a string"));
        h.metadata[mk] = mv.str;
      }
      continue;
    }
    h.entries.push_back(parse_entry(key, value, file));
  }
  check_tiling(h.entries, buffer_size, file);
  return h;
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

// Validates the 8-byte preamble against the total size; returns the header length N.
uint64_t header_length(const uint8_t* first8, uint64_t total, const std::string& file) {
  if (total < 8)
    bad_file(
        file, "HeaderTooSmall",
        detail::str_cat("file is ", total, " bytes; a safetensors file starts with an 8-byte header length"));
  uint64_t n = read_u64_le(first8);
  if (n > kMaxHeaderBytes)
    bad_file(
        file, "HeaderTooLarge",
        detail::str_cat("header length ", n, " is larger than the limit of ", kMaxHeaderBytes, " bytes"));
  if (n > total - 8)
    bad_file(file, "InvalidHeaderLength",
             detail::str_cat("header length ", n, " is larger than the file (", total, " bytes)"));
  if (n < 2)
    bad_file(file, "InvalidHeaderLength",
             detail::str_cat("header length ", n, " is too small for a JSON object"));
  return n;
}

void check_bool_bytes(const Tensor& t, const std::string& file, const std::string& name) {
  const auto* p = static_cast<const uint8_t*>(t.data_ptr());
  for (int64_t i = 0; i < t.numel(); ++i)
    if (p[i] > 1)
      bad_file(file, detail::str_cat("BOOL tensor '", name, "' holds the byte ", int(p[i]), " (not 0 or 1)"));
}

// ---- writing ------------------------------------------------------------------------

using Sink = std::function<void(const void*, size_t)>;

// A CPU, contiguous, graph-free view of `t` whose bytes are exactly what the file stores.
Tensor storable(const Tensor& t, const std::string& name) {
  EMBER_CHECK(t.defined(), "cannot save tensor '", name, "': it is undefined");
  NoGradGuard no_grad;
  Tensor c = t.detach();
  if (!c.is_cpu()) c = c.cpu();
  return c.contiguous();
}

void write_safetensors(const OrderedDict<std::string, Tensor>& tensors, const SafetensorsMetadata& metadata,
                       const Sink& sink) {
  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) json += ',';
      first = false;
      write_json_string(json, k);
      json += ':';
      write_json_string(json, v);
    }
    json += '}';
  }
  uint64_t offset = 0;
  for (const auto& item : tensors) {
    const Tensor& t = item.value();
    EMBER_CHECK(item.key() != "__metadata__",
                "cannot save a tensor named '__metadata__' (reserved by safetensors)");
    EMBER_CHECK(t.defined(), "cannot save tensor '", item.key(), "': it is undefined");
    if (json.size() > 1) json += ',';
    write_json_string(json, item.key());
    json += detail::str_cat(":{\"dtype\":\"", safetensors_dtype(t.dtype()), "\",\"shape\":[");
    for (size_t d = 0; d < t.sizes().size(); ++d) json += detail::str_cat(d ? "," : "", t.sizes()[d]);
    json += detail::str_cat("],\"data_offsets\":[", offset, ",", offset + t.nbytes(), "]}");
    offset += t.nbytes();
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');  // data starts 8-byte aligned, as safetensors writes
  uint64_t n = json.size();
  uint8_t len[8];
  std::memcpy(len, &n, 8);
  sink(len, 8);
  sink(json.data(), json.size());
  for (const auto& item : tensors) {
    Tensor c = storable(item.value(), item.key());  // one copy at a time keeps peak memory low
    if (c.nbytes() != 0) sink(c.data_ptr(), c.nbytes());
  }
}

// ---- reading files -----------------------------------------------------------------

class ReadFile {
 public:
  explicit ReadFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EMBER_CHECK(fd_ >= 0, "cannot open '", path, "': ", std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      detail::throw_error(detail::str_cat("cannot read '", path, "': not a regular file"));
    }
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~ReadFile() { ::close(fd_); }
  ReadFile(const ReadFile&) = delete;
  ReadFile& operator=(const ReadFile&) = delete;

  uint64_t size() const { return size_; }
  void read_at(void* dst, size_t n, uint64_t offset) const {
    auto* p = static_cast<char*>(dst);
    while (n > 0) {
      ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      EMBER_CHECK(got > 0, "cannot read '", path_,
                  "': ", got < 0 ? std::strerror(errno) : "unexpected end of file");
      p += got;
      n -= static_cast<size_t>(got);
      offset += static_cast<uint64_t>(got);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Reads and validates a file's header; `data_start` receives the data buffer's file offset.
Header read_header(const ReadFile& f, const std::string& path, uint64_t& data_start) {
  uint8_t first8[8] = {};
  if (f.size() >= 8) f.read_at(first8, 8, 0);
  uint64_t n = header_length(first8, f.size(), path);
  std::string text(n, '\0');
  f.read_at(text.data(), n, 8);
  data_start = 8 + n;
  return parse_header(text.data(), n, f.size() - data_start, path);
}

}  // namespace

// ---- public API ---------------------------------------------------------------------

std::vector<uint8_t> serialize_safetensors(const OrderedDict<std::string, Tensor>& tensors,
                                           const SafetensorsMetadata& metadata) {
  std::vector<uint8_t> out;
  write_safetensors(tensors, metadata, [&](const void* p, size_t n) {
    out.insert(out.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
  });
  return out;
}

OrderedDict<std::string, Tensor> deserialize_safetensors(const uint8_t* data, size_t size,
                                                         const std::string& name) {
  uint64_t n = header_length(data, size, name);
  const uint8_t* buffer = data + 8 + n;
  Header h = parse_header(reinterpret_cast<const char*>(data + 8), n, size - 8 - n, name);
  OrderedDict<std::string, Tensor> out("Tensor");
  for (const Entry& e : h.entries) {
    Tensor t = empty(e.shape, e.dtype);
    if (e.end > e.begin) std::memcpy(t.data_ptr(), buffer + e.begin, e.end - e.begin);
    if (e.dtype == kBool) check_bool_bytes(t, name, e.name);
    out.insert(e.name, std::move(t));
  }
  return out;
}

OrderedDict<std::string, Tensor> deserialize_safetensors(const std::vector<uint8_t>& bytes,
                                                         const std::string& name) {
  return deserialize_safetensors(bytes.data(), bytes.size(), name);
}

SafetensorsMetadata deserialize_safetensors_metadata(const std::vector<uint8_t>& bytes,
                                                     const std::string& name) {
  uint64_t n = header_length(bytes.data(), bytes.size(), name);
  return parse_header(reinterpret_cast<const char*>(bytes.data() + 8), n, bytes.size() - 8 - n, name)
      .metadata;
}

void save_file(const OrderedDict<std::string, Tensor>& tensors, const std::string& path,
               const SafetensorsMetadata& metadata) {
  detail::write_file_atomic(path, [&](detail::AtomicFileWriter& w) {
    write_safetensors(tensors, metadata, [&](const void* p, size_t n) { w.write(p, n); });
  });
}

OrderedDict<std::string, Tensor> load_file(const std::string& path, Device device) {
  SafetensorsMetadata unused;
  return load_file(path, device, unused);
}

OrderedDict<std::string, Tensor> load_file(const std::string& path, Device device,
                                           SafetensorsMetadata& metadata) {
  ReadFile f(path);  // one open: header and data of the same file, whatever renames happen
  uint64_t data_start = 0;
  Header h = read_header(f, path, data_start);
  metadata = h.metadata;
  OrderedDict<std::string, Tensor> out("Tensor");
  for (const Entry& e : h.entries) {
    Tensor t = empty(e.shape, e.dtype);
    if (e.end > e.begin) f.read_at(t.data_ptr(), e.end - e.begin, data_start + e.begin);
    if (e.dtype == kBool) check_bool_bytes(t, path, e.name);
    out.insert(e.name, device.is_cpu() ? std::move(t) : t.to(device));
  }
  return out;
}

SafetensorsMetadata load_file_metadata(const std::string& path) {
  ReadFile f(path);
  uint64_t data_start = 0;
  return read_header(f, path, data_start).metadata;
}

void save(const Tensor& tensor, const std::string& path) {
  OrderedDict<std::string, Tensor> d;
  d.insert("tensor", tensor);
  save_file(d, path);
}

void save(const std::vector<Tensor>& tensors, const std::string& path) {
  OrderedDict<std::string, Tensor> d;
  for (size_t i = 0; i < tensors.size(); ++i) d.insert(std::to_string(i), tensors[i]);
  save_file(d, path);
}

void save(const OrderedDict<std::string, Tensor>& tensors, const std::string& path) {
  save_file(tensors, path);
}

void load(Tensor& tensor, const std::string& path, Device device) {
  OrderedDict<std::string, Tensor> d = load_file(path, device);
  if (const Tensor* t = d.find("tensor")) {
    tensor = *t;
    return;
  }
  EMBER_CHECK(d.size() == 1, "load(Tensor&): '", path, "' holds ", d.size(),
              " tensors and none is named 'tensor'; use load_file to read them all");
  tensor = d[size_t{0}].value();
}

void load(std::vector<Tensor>& tensors, const std::string& path, Device device) {
  OrderedDict<std::string, Tensor> d = load_file(path, device);
  std::vector<Tensor> out;
  for (size_t i = 0; i < d.size(); ++i) {
    const Tensor* t = d.find(std::to_string(i));
    EMBER_CHECK(t != nullptr, "load(std::vector<Tensor>&): '", path, "' has no tensor '", i,
                "'; a saved vector stores its tensors under the keys 0..n-1");
    out.push_back(*t);
  }
  tensors = std::move(out);
}

void load(OrderedDict<std::string, Tensor>& tensors, const std::string& path, Device device) {
  tensors = load_file(path, device);
}

}  // namespace ember
