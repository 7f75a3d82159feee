// fuzz_safetensors: arbitrary bytes into the safetensors reader (core/serialize.cpp, its JSON
// in core/safetensors_json.cpp). Every input must either be rejected with ember::Error or
// load; what loads must survive a round trip (write it, read it back: same names, dtypes,
// shapes, bytes and metadata).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ember/core/serialize.h"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_safetensors finding: %s\n", what);
  std::abort();
}

void check_same(const ember::OrderedDict<std::string, ember::Tensor>& a,
                const ember::OrderedDict<std::string, ember::Tensor>& b) {
  if (a.size() != b.size()) finding("round trip changed the tensor count");
  for (size_t i = 0; i < a.size(); ++i) {
    const ember::Tensor &x = a[i].value(), &y = b[i].value();
    if (a[i].key() != b[i].key()) finding("round trip changed a name or the order");
    if (x.dtype() != y.dtype() || !x.sizes().equals(y.sizes()))
      finding("round trip changed a dtype or shape");
    if (!x.is_contiguous() || !y.is_contiguous()) finding("a loaded tensor is not contiguous");
    if (x.nbytes() != 0 && std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) != 0)
      finding("round trip changed the data");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::OrderedDict<std::string, ember::Tensor> loaded;
  ember::SafetensorsMetadata meta;
  try {
    loaded = ember::deserialize_safetensors(data, size, "fuzz");
    meta = ember::deserialize_safetensors_metadata(std::vector<uint8_t>(data, data + size), "fuzz");
  } catch (const ember::Error&) {
    return 0;  // rejected: the expected answer to almost every input
  }
  std::vector<uint8_t> again = ember::serialize_safetensors(loaded, meta);
  try {
    check_same(loaded, ember::deserialize_safetensors(again, "round trip"));
    if (ember::deserialize_safetensors_metadata(again, "round trip") != meta)
      finding("round trip changed metadata");
  } catch (const ember::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    finding("ember's own output of an accepted file was rejected");
  }
  return 0;
}
