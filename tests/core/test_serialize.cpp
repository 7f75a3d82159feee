// safetensors I/O: round trips of every dtype and layout, the exact bytes of a small file,
// a file written by PyTorch, every malformed-file case (bytes crafted by hand), and the
// atomic write surviving a crash mid-write (a forked child killed by the test hook).
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ember/core/atomic_file.h"
#include "ember/core/serialize.h"
#include "fixtures/pytorch_fixture.h"
#include "op_check.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace ember;
using namespace ember::test;
using Dict = OrderedDict<std::string, Tensor>;

namespace {

/// The raw bytes of a tensor, contiguous (bit-exact comparison, NaN payloads included).
std::vector<uint8_t> bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  const auto* p = static_cast<const uint8_t*>(c.data_ptr());
  return std::vector<uint8_t>(p, p + c.nbytes());
}

void check_same(const Tensor& got, const Tensor& want) {
  CHECK(got.dtype() == want.dtype());
  CHECK(shape(got) == shape(want));
  CHECK(got.is_cpu());
  CHECK(got.is_contiguous());
  CHECK(bytes_of(got) == bytes_of(want));
}

/// A safetensors file built by hand: length prefix, the JSON text as given, then `data`.
std::vector<uint8_t> craft(const std::string& json, size_t data_bytes = 0, uint64_t declared = UINT64_MAX) {
  uint64_t n = declared == UINT64_MAX ? json.size() : declared;
  // Sized once up front: GCC 12 -O3 misreads insert-after-memcpy as out of bounds.
  std::vector<uint8_t> out(8 + json.size() + data_bytes, 0);
  std::memcpy(out.data(), &n, 8);
  std::copy(json.begin(), json.end(), out.begin() + 8);
  return out;
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

void check_bad(const std::vector<uint8_t>& file, const std::string& text) {
  check_error([&] { deserialize_safetensors(file, "bad.safetensors"); }, text);
  check_error([&] { deserialize_safetensors(file, "bad.safetensors"); },
              "safetensors file 'bad.safetensors'");
}

Dict every_dtype() {
  Dict d;
  std::vector<double> v = {0, 1, -1, 2.5, 127, -128};
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16, kLong, kInt, kShort, kChar}) {
    d.insert(std::string(scalar_type_name(dt)), from_values(v, {2, 3}, dt));
  }
  d.insert("Byte", from_values({0, 1, 200, 255}, {4}, kByte));
  d.insert("Bool", from_values({1, 0, 0, 1}, {2, 2}, kBool));
  d.insert("zero_dim", scalar_tensor(3.5, kDouble));
  d.insert("empty", zeros({0, 3}, kFloat));
  d.insert("empty_long", zeros({2, 0}, kLong));
  d.insert("transposed", seq({3, 4}, kFloat).t());                          // non-contiguous
  d.insert("strided", seq({10}, kInt).slice(0, 1, 10, 3));                  // step 3: 1, 4, 7
  d.insert("expanded", from_values({1, 2}, {2, 1}, kHalf).expand({2, 3}));  // stride 0
  d.insert("random", randn({7, 5}, kDouble));
  d.insert("special", from_values({NAN, INFINITY, -INFINITY, -0.0}, {4}, kFloat));
  return d;
}

}  // namespace

TEST_CASE("test_serialize: every dtype and layout round-trips bit-exactly in memory and on disk") {
  Dict d = every_dtype();
  TempDir tmp;
  std::string path = tmp / "all.safetensors";
  save_file(d, path);
  for (const Dict& back : {deserialize_safetensors(serialize_safetensors(d)), load_file(path)}) {
    REQUIRE(back.size() == d.size());
    CHECK(back.keys() == d.keys());  // dict order is kept
    for (const auto& item : d) {
      INFO("tensor " << item.key());
      check_same(back[item.key()], item.value());
    }
  }
  // The non-contiguous ones are stored as their values, row-major.
  check_close(load_file(path)["strided"], {1, 4, 7});
  check_close(load_file(path)["transposed"], {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(load_file_metadata(path).empty());
  CHECK(tmp.others("all.safetensors").empty());  // no temporary file left behind
}

TEST_CASE("test_serialize: every float16 and bfloat16 bit pattern round-trips as F16 / BF16") {
  // All 65536 patterns of each (NaN payloads, both infinities, subnormals, -0) are stored as
  // raw bytes and come back bit for bit, with the header's dtype names PyTorch writes.
  Tensor h = empty({65536}, kHalf), b = empty({256, 256}, kBFloat16);
  for (uint32_t i = 0; i < 65536; ++i) {
    h.data_ptr<Half>()[i] = Half::from_bits(static_cast<uint16_t>(i));
    b.data_ptr<BFloat16>()[i] = BFloat16::from_bits(static_cast<uint16_t>(i));
  }
  Dict d;
  d.insert("h", h);
  d.insert("b", b);
  d.insert("b_t", b.t());  // non-contiguous: stored row-major
  std::vector<uint8_t> bytes = serialize_safetensors(d);
  const std::string text(bytes.begin(), bytes.end());
  CHECK(text.find("\"h\":{\"dtype\":\"F16\"") != std::string::npos);
  CHECK(text.find("\"b\":{\"dtype\":\"BF16\"") != std::string::npos);
  Dict back = deserialize_safetensors(bytes);
  check_same(back["h"], h);
  check_same(back["b"], b);
  check_same(back["b_t"], b.t().contiguous());
}

TEST_CASE("test_serialize: loaded tensors own their memory and carry no autograd state") {
  Tensor w = rand_leaf({2, 2});
  Dict d;
  d.insert("w", w * 2);  // has a grad_fn: saved as data only
  Dict back = deserialize_safetensors(serialize_safetensors(d));
  CHECK_FALSE(back["w"].requires_grad());
  std::vector<uint8_t> bytes = serialize_safetensors(d);
  Dict again = deserialize_safetensors(bytes);
  std::fill(bytes.begin(), bytes.end(), 0);  // the source buffer going away changes nothing
  check_close(again["w"], w.detach() * 2);
}

TEST_CASE("test_serialize: the exact bytes of a small file") {
  Dict d;
  d.insert("x", from_values({1.0}, {1}, kFloat));
  d.insert("n", from_values({-2}, {}, kShort));
  std::vector<uint8_t> b = serialize_safetensors(d, {{"k", "v"}});
  std::string json = R"({"__metadata__":{"k":"v"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                     R"("n":{"dtype":"I16","shape":[],"data_offsets":[4,6]}})";
  json.append((8 - json.size() % 8) % 8, ' ');  // padded so the data starts 8-byte aligned
  std::vector<uint8_t> want = craft(json);
  // 1.0f = 0x3f800000 little-endian; -2 as int16 = 0xfffe little-endian.
  for (uint8_t byte : {0x00, 0x00, 0x80, 0x3f, 0xfe, 0xff}) want.push_back(byte);
  CHECK(b == want);
  CHECK((b.size() - 6) % 8 == 0);
}

TEST_CASE("test_serialize: metadata with escapes and unicode round-trips") {
  SafetensorsMetadata meta = {{"format", "pt"},
                              {"quote \"q\"", "back\\slash\nnew line\ttab \x01 ctrl"},
                              {"unicode", "\xc3\xbc \xe2\x82\xac \xf0\x9f\x94\xa5"}};  // ü € 🔥
  Dict d;
  d.insert("a", ones({2}));
  std::vector<uint8_t> b = serialize_safetensors(d, meta);
  CHECK(deserialize_safetensors_metadata(b) == meta);
  TempDir tmp;
  save_file(d, tmp / "m.safetensors", meta);
  CHECK(load_file_metadata(tmp / "m.safetensors") == meta);
  // \u escapes (including a surrogate pair) decode to UTF-8, as any JSON writer may use them.
  std::string json = R"({"__metadata__":{"k":"\u00fc\u20ac\ud83d\udd25\/"}})";
  json.append((8 - json.size() % 8) % 8, ' ');
  CHECK(deserialize_safetensors_metadata(craft(json)).at("k") == "\xc3\xbc\xe2\x82\xac\xf0\x9f\x94\xa5/");
}

TEST_CASE("test_serialize: a file written by PyTorch's safetensors loads with its values") {
  // make_safetensors_fixture.py wrote it; PyTorch's writer orders tensors by dtype size.
  std::vector<uint8_t> bytes(std::begin(kPytorchFixture), std::end(kPytorchFixture));
  TempDir tmp;
  write_bytes(tmp / "torch.safetensors", bytes);
  for (const Dict& d : {deserialize_safetensors(bytes), load_file(tmp / "torch.safetensors")}) {
    REQUIRE(d.size() == 12);
    CHECK(d.keys().front() == "i64");  // header order
    check_close(d["f32"], {0.5, -1.25, 3.0, 1e-3, 65504.0, -0.0}, 0, 1e-7);
    CHECK(d["f32"].dtype() == kFloat);
    CHECK(shape(d["f32"]) == std::vector<int64_t>{2, 3});
    CHECK(std::signbit(values(d["f32"])[5]));
    std::vector<double> f64 = values(d["f64"]);
    CHECK(f64 == std::vector<double>{1.0 / 3.0, -2.5e-300, 1e300});
    check_close(d["f16"], {1.0, -2.0, 0.0999755859375, 65504.0}, 0, 0);  // 0.1 rounded to half
    CHECK(d["f16"].dtype() == kHalf);
    check_close(d["bf16"], {1.0, -3.140625}, 0, 0);
    CHECK(d["bf16"].dtype() == kBFloat16);
    const int64_t* i64 = d["i64"].data_ptr<int64_t>();
    CHECK(i64[0] == -(int64_t{1} << 62));
    CHECK(i64[1] == 0);
    CHECK(i64[2] == (int64_t{1} << 40) + 7);
    CHECK(d["i32"].dim() == 0);
    CHECK(d["i32"].item<int64_t>() == -123456);
    check_close(d["i16"], {-32768, 32767}, 0, 0);
    CHECK(d["i8"].dtype() == kChar);
    check_close(d["i8"], {-128, 127}, 0, 0);
    check_close(d["u8"], {0, 200, 255}, 0, 0);
    CHECK(d["flag"].dtype() == kBool);
    check_close(d["flag"], {1, 0, 1}, 0, 0);
    CHECK(shape(d["empty"]) == std::vector<int64_t>{0, 3});
    check_close(d["layer.0.weight"], {0, 2, 1, 3}, 0, 0);
  }
  SafetensorsMetadata meta = deserialize_safetensors_metadata(bytes);
  CHECK(meta.at("format") == "pt");
  CHECK(meta.at("note") == "made by PyTorch \"1.13\"");
}

TEST_CASE("test_serialize: a file written by ember loads in PyTorch (when Python is available)") {
  // The same tensors check_ember_file.py expects; it is also runnable by hand:
  //   /usr/bin/python3 tests/core/fixtures/check_ember_file.py FILE
  Dict d;
  d.insert("a.f32", seq({2, 3}, kFloat) * 0.5 - 1);
  d.insert("b.f64", from_values({1.0 / 3.0, -2.5, 1e300}, {3}, kDouble));
  d.insert("c.f16", from_values({1, -2, 0.5}, {3}, kHalf));
  d.insert("d.bf16", from_values({1, -3.140625}, {2}, kBFloat16));
  d.insert("e.i64", longs({-(int64_t{1} << 62), 0, 7}));
  d.insert("f.i32", scalar_tensor(42, kInt));
  d.insert("g.bool", from_values({1, 0}, {2}, kBool));
  d.insert("h.u8", from_values({0, 255}, {2}, kByte));
  d.insert("i.i8", from_values({-128, 127}, {2}, kChar));
  d.insert("j.i16", from_values({-32768, 32767}, {2}, kShort));
  d.insert("k.noncontiguous", seq({2, 3}, kFloat).t());
  d.insert("l.empty", zeros({0, 4}));
  SafetensorsMetadata meta = {
      {"writer", "ember"}, {"quote", "a \"q\" \\ and\nnewline"}, {"unicode", "\xc3\xbc\xe2\x82\xac"}};
  TempDir tmp;
  std::string path = tmp / "ember.safetensors";
  save_file(d, path, meta);
  REQUIRE(load_file(path).size() == 12);

  // The script sits next to this file; __FILE__ is absolute, or relative to the build root
  // (ccache's base_dir), which is the parent of the test binary's folder.
  std::string script;
  fs::path here = fs::path(__FILE__).parent_path();
  fs::path build_root = fs::read_symlink("/proc/self/exe").parent_path().parent_path();
  for (const fs::path& base : {here, build_root / here, fs::current_path() / here}) {
    if (fs::exists(base / "fixtures" / "check_ember_file.py"))
      script = (base / "fixtures" / "check_ember_file.py").string();
  }
  if (script.empty() || std::system("/usr/bin/python3 -c 'import safetensors.torch' >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: /usr/bin/python3 with torch + safetensors (or check_ember_file.py) not found");
    return;
  }
  CHECK(std::system(("/usr/bin/python3 " + script + " " + path).c_str()) == 0);
}

TEST_CASE("test_serialize: malformed files are rejected with a clear error before data is used") {
  auto pad = [](std::string j) { return j.append((8 - j.size() % 8) % 8, ' '); };
  const std::string w24 = R"("w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]})";
  REQUIRE(deserialize_safetensors(craft(pad("{" + w24 + "}"), 24)).size() == 1);  // the base is valid

  check_bad(std::vector<uint8_t>(5, 0),
            "file is 5 bytes; a safetensors file starts with an 8-byte header length");
  check_bad(craft("{}", 0, 1000), "header length 1000 is larger than the file (10 bytes)");
  check_bad(craft("{}", 0, uint64_t{1} << 40), "is larger than the limit of 100000000 bytes");
  check_bad(craft("{\"w\":"), "invalid JSON header: unexpected end");
  check_bad(craft("[1]"), "the header must be a JSON object");
  check_bad(craft(R"({"w":true})"), "unexpected character 't'");
  check_bad(craft(R"({"w":null})"), "unexpected character 'n'");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4),
            "numbers must be integers");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}})", 4), "leading zero");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,4]}})", 4),
            "integer out of range");
  check_bad(craft(R"({"w":{"dt\ype":"F32"}})"), "invalid escape");
  check_bad(craft(R"({"k":"\ud800"})"), "unpaired surrogate");
  check_bad(craft("{\"a\":\"x\ty\"}"), "control character in a string");
  check_bad(craft(R"({} x)"), "unexpected text after the JSON object");
  check_bad(craft(R"({"w":"oops")"), "expected '}'");
  check_bad(craft(std::string(20, '[') + std::string(20, ']')), "the header must be a JSON object");
  check_bad(craft(R"({"w":[[[[[[[[[[[[]]]]]]]]]]]]})"), "nesting too deep");

  check_bad(craft(R"({"w":{"dtype":"F8","shape":[1],"data_offsets":[0,1]}})", 1),
            "unknown dtype 'F8' for tensor 'w'");
  check_bad(craft(R"({"w":{"dtype":"U16","shape":[1],"data_offsets":[0,2]}})", 2),
            "dtype 'U16' of tensor 'w' is not supported");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 20),
            "tensor 'w' of dtype F32 and shape [2, 3] needs 24 bytes but its data_offsets span 20");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,4]}})", 4),
            "the shape of tensor 'w' is too large");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[0,4611686018427387904,4],"data_offsets":[0,0]}})"),
            "the shape of tensor 'w' is too large");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
            "\"shape\" of tensor 'w' must hold non-negative integers");
  check_bad(craft(pad("{" + w24 + "}"), 16),
            "data_offsets [0, 24] of tensor 'w' are out of range: the data buffer has 16 bytes");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8), "with begin > end");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4), "must be [begin, end]");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[1]}})", 4), "tensor 'w' has no \"data_offsets\"");
  check_bad(craft(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4), "tensor 'w' needs a string \"dtype\"");
  check_bad(craft(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1}})", 4),
            "unexpected field 'extra'");
  check_bad(craft(R"({"w":[1]})"), "the entry of tensor 'w' must be an object");
  check_bad(
      craft(
          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
          12),
      "tensors 'a' and 'b' overlap");
  check_bad(
      craft(
          R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
          12),
      "bytes [4, 8) of the data buffer belong to no tensor (before 'b')");
  check_bad(craft(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
            "bytes [0, 4) of the data buffer belong to no tensor");
  check_bad(craft(pad("{" + w24 + "}"), 32), "the data buffer has 32 bytes but the tensors cover 24");
  check_bad(craft(pad("{" + w24 + "," + w24 + "}"), 24), "duplicate key 'w'");
  check_bad(craft(R"({"__metadata__":{"k":1}})"), "metadata value for key 'k' must be a string");
  check_bad(craft(R"({"__metadata__":[]})"), "\"__metadata__\" must be an object of strings");
  std::vector<uint8_t> bad_bool = craft(R"({"b":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", 2);
  bad_bool.back() = 7;
  check_bad(bad_bool, "BOOL tensor 'b' holds the byte 7");
}

TEST_CASE("test_serialize: file errors name the path") {
  TempDir tmp;
  std::string path = tmp / "broken.safetensors";
  write_bytes(path, craft(R"({"w":{"dtype":"F8","shape":[1],"data_offsets":[0,1]}})", 1));
  check_error(
      [&] { load_file(path); },
      "safetensors file '" + path + "': InvalidHeaderDeserialization: unknown dtype 'F8' for tensor 'w'");
  check_error([&] { load_file_metadata(path); }, "unknown dtype 'F8'");
  write_bytes(path, std::vector<uint8_t>(3, 0));
  check_error([&] { load_file(path); }, "file is 3 bytes");
  check_error([&] { load_file(tmp / "missing.safetensors"); },
              "cannot open '" + (tmp / "missing.safetensors") + "': No such file or directory");
  check_error([&] { load_file(tmp.dir.string()); }, "not a regular file");
  // A file cut short after its header: the data buffer is smaller than the offsets say.
  Dict d;
  d.insert("w", ones({4}));
  std::vector<uint8_t> b = serialize_safetensors(d);
  REQUIRE(b.size() > 8);
  b.pop_back();  // (resize(size() - 1) trips GCC 12's -Wstringop-overflow at -O1)
  write_bytes(path, b);
  check_error([&] { load_file(path); }, "are out of range: the data buffer has 15 bytes");
}

TEST_CASE("test_serialize: saving refuses bad input and never leaves a partial file") {
  TempDir tmp;
  std::string path = tmp / "keep.safetensors";
  Dict old;
  old.insert("old", seq({3}, kFloat));
  save_file(old, path);
  Dict bad;
  bad.insert("fine", ones({2}));
  bad.insert("hole", Tensor());
  check_error([&] { save_file(bad, path); }, "cannot save tensor 'hole': it is undefined");
  Dict reserved;
  reserved.insert("__metadata__", ones({1}));
  check_error([&] { save_file(reserved, path); }, "reserved by safetensors");
  check_close(load_file(path)["old"], {0, 1, 2});
  CHECK(tmp.others("keep.safetensors").empty());
  check_error([&] { save_file(old, tmp / "no_such_dir/x.safetensors"); },
              "cannot write '" + (tmp / "no_such_dir/x.safetensors") +
                  "': creating a temporary file failed: No such file or directory");
  // A writer that throws halfway: the temporary file is removed, the target untouched.
  check_error(
      [&] {
        detail::write_file_atomic(path, [](detail::AtomicFileWriter& w) {
          w.write("partial", 7);
          throw Error("writer failed");
        });
      },
      "writer failed");
  check_close(load_file(path)["old"], {0, 1, 2});
  CHECK(tmp.others("keep.safetensors").empty());
}

TEST_CASE("test_serialize: a crash mid-write leaves the previous file intact and loadable") {
  TempDir tmp;
  std::string path = tmp / "ckpt.safetensors";
  Dict old;
  old.insert("step", scalar_tensor(1, kLong));
  old.insert("w", seq({4}, kDouble));
  save_file(old, path);
  Dict next;
  next.insert("step", scalar_tensor(2, kLong));
  next.insert("w", seq({64}, kDouble));
  size_t full = serialize_safetensors(next).size();

  // Each child saves `next` with the crash hook set; it must die after that many bytes.
  auto save_in_child = [&](int64_t crash_after) {
    std::fflush(nullptr);  // the child must not inherit (and later repeat) buffered output
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::setenv("EMBER_TEST_CRASH_AFTER_BYTES", std::to_string(crash_after).c_str(), 1);
      try {
        save_file(next, path);
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    return std::pair(WEXITSTATUS(status), pid);
  };
  for (int64_t cut : {int64_t{0}, int64_t{4}, int64_t{60}, static_cast<int64_t>(full) - 1}) {
    INFO("crash after " << cut << " of " << full << " bytes");
    auto [code, pid] = save_in_child(cut);
    CHECK(code == detail::kTestCrashExitCode);
    Dict back = load_file(path);  // the old file, whole
    check_same(back["w"], old["w"]);
    CHECK(back["step"].item<int64_t>() == 1);
    // The crashed write left its partial temporary beside the file, never in its place.
    std::string partial = path + ".tmp." + std::to_string(pid);
    REQUIRE(fs::exists(partial));
    CHECK(fs::file_size(partial) == static_cast<uintmax_t>(cut));
    fs::remove(partial);
  }
  // With the limit past the end the hook never fires and the new file replaces the old one.
  auto [code, pid] = save_in_child(static_cast<int64_t>(full) + 1);
  CHECK(code == 0);
  CHECK(load_file(path)["step"].item<int64_t>() == 2);
  CHECK(tmp.others("ckpt.safetensors").empty());
}

TEST_CASE("test_serialize: libtorch's save/load spelling for a tensor, a vector and a dict") {
  TempDir tmp;
  Tensor t = randn({3, 2}).t();
  save(t, tmp / "t.safetensors");
  Tensor back;
  load(back, tmp / "t.safetensors");
  check_same(back, t);
  CHECK(load_file(tmp / "t.safetensors").keys() == std::vector<std::string>{"tensor"});

  std::vector<Tensor> v = {ones({2}), zeros({0}), scalar_tensor(7, kLong)};
  save(v, tmp / "v.safetensors");
  std::vector<Tensor> vb;
  load(vb, tmp / "v.safetensors");
  REQUIRE(vb.size() == 3);
  for (size_t i = 0; i < 3; ++i) check_same(vb[i], v[i]);

  Dict d;
  d.insert("z", ones({1}));
  d.insert("a", zeros({2}));
  save(d, tmp / "d.safetensors");
  Dict db;
  load(db, tmp / "d.safetensors");
  CHECK(db.keys() == std::vector<std::string>{"z", "a"});
  // load(Tensor&) takes the only tensor of a file whatever its name, and refuses ambiguity.
  Tensor only;
  check_error([&] { load(only, tmp / "d.safetensors"); }, "holds 2 tensors and none is named 'tensor'");
  Dict one;
  one.insert("weight", ones({2}));
  save(one, tmp / "one.safetensors");
  load(only, tmp / "one.safetensors");
  check_close(only, {1, 1});
  check_error([&] { load(vb, tmp / "d.safetensors"); }, "has no tensor '0'");
}

TEST_CASE("test_serialize: tensors on a CUDA device are saved from host copies and load on the CPU") {
  if (!cuda::is_available()) {
    MESSAGE("skipped: no CUDA device");
    return;
  }
  Tensor t = seq({2, 3}, kFloat).to(Device("cuda"));
  Dict d;
  d.insert("t", t.t());  // non-contiguous on the device
  Dict back = deserialize_safetensors(serialize_safetensors(d));
  CHECK(back["t"].is_cpu());
  check_close(back["t"], {0, 3, 1, 4, 2, 5}, 0, 0);
}

TEST_CASE("test_serialize: every truncation and single-byte corruption loads or throws ember::Error") {
  Dict d;
  d.insert("w", seq({2, 3}, kFloat));
  d.insert("flag", from_values({1, 0}, {2}, kBool));
  d.insert("n", scalar_tensor(7, kLong));
  std::vector<uint8_t> good = serialize_safetensors(d, {{"k", "v"}});
  for (size_t len = 0; len < good.size(); ++len) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len));
    INFO("truncated to " << len << " bytes");
    CHECK_THROWS_AS(deserialize_safetensors(cut), Error);
  }
  int loaded = 0, rejected = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t v : {0x00, 0x01, 0x22, 0x2c, 0x5c, 0x7b, 0x80, 0xff}) {
      std::vector<uint8_t> bad = good;
      bad[i] = v;
      try {
        deserialize_safetensors(bad);
        ++loaded;
      } catch (const Error&) {
        ++rejected;
      }
    }
  }
  CHECK(loaded > 0);  // data bytes may take any value (except in the BOOL tensor)
  CHECK(rejected > 0);
}
