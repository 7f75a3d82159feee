// ember::save(module, path) / ember::load(module, path): PyTorch's state-dict keys, buffers,
// holders and shared_ptrs, strictness, and weights written by PyTorch giving PyTorch's output.
#include <unistd.h>

#include <filesystem>

#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/serialize.h"
#include "fixtures/module_fixture.h"
#include "op_check.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace ember;
using namespace ember::test;
using Dict = OrderedDict<std::string, Tensor>;

namespace {

// A module with a child, a buffer and an integer buffer, like BatchNorm's running stats.
struct NetImpl : nn::Module {
  nn::Linear fc{nullptr};
  Tensor running, count;
  NetImpl() {
    fc = register_module("fc", nn::Linear(3, 2));
    running = register_buffer("running_mean", randn({2}));
    count = register_buffer("num_batches_tracked", scalar_tensor(5, kLong));
  }
};
EMBER_MODULE(Net);

nn::Sequential mlp() { return nn::Sequential(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2)); }

void check_same_state(const nn::Module& a, const nn::Module& b) {
  auto sa = a.state_dict();
  auto sb = b.state_dict();
  REQUIRE(sa.keys() == sb.keys());
  for (const auto& item : sa) {
    INFO(item.key());
    CHECK(item.value().dtype() == sb[item.key()].dtype());
    CHECK(equal(item.value(), sb[item.key()]));
  }
}

}  // namespace

TEST_CASE("test_module_serialize: a model round-trips with PyTorch's state-dict keys") {
  TempDir tmp;
  nn::Sequential a = mlp();
  save(a, tmp / "mlp.safetensors");
  CHECK(load_file(tmp / "mlp.safetensors").keys() ==
        std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  CHECK(load_file_metadata(tmp / "mlp.safetensors").at("format") == "pt");
  nn::Sequential b = mlp();  // different random init
  CHECK_FALSE(equal(a->parameters()[0], b->parameters()[0]));
  load(b, tmp / "mlp.safetensors");
  check_same_state(*a, *b);
  Tensor x = randn({5, 3});
  CHECK(equal(a->forward(x), b->forward(x)));
  // Loading copies into the existing parameters: handles (an optimizer's list) stay valid.
  Tensor w = b->parameters()[0];
  load(b, tmp / "mlp.safetensors");
  CHECK(w.unsafeGetTensorImpl() == b->parameters()[0].unsafeGetTensorImpl());
  CHECK(w.requires_grad());
}

TEST_CASE("test_module_serialize: buffers, holders and shared_ptrs") {
  TempDir tmp;
  Net a;
  a->count.fill_(9);
  save(a, tmp / "net.safetensors");
  Dict keys_file = load_file(tmp / "net.safetensors");
  // PyTorch's order: a module's own parameters and buffers, then its children's.
  CHECK(keys_file.keys() ==
        std::vector<std::string>{"running_mean", "num_batches_tracked", "fc.weight", "fc.bias"});
  CHECK(keys_file["num_batches_tracked"].dtype() == kLong);

  auto b = std::make_shared<NetImpl>();
  load(b, tmp / "net.safetensors");
  CHECK(b->count.item<int64_t>() == 9);
  check_same_state(*a, *b);

  std::shared_ptr<NetImpl> c = std::make_shared<NetImpl>();
  save(c, tmp / "c.safetensors");
  NetImpl d;
  load(d, tmp / "c.safetensors");
  check_same_state(*c, d);
}

TEST_CASE("test_module_serialize: strict loading reports missing, unexpected and mis-shaped keys") {
  TempDir tmp;
  Dict partial;
  partial.insert("fc.weight", zeros({2, 3}));
  partial.insert("extra", zeros({1}));
  save_file(partial, tmp / "partial.safetensors");
  Net n;
  check_error([&] { load(n, tmp / "partial.safetensors"); },
              "Missing key(s) in state_dict: \"running_mean\", \"num_batches_tracked\", \"fc.bias\"");
  check_error([&] { load(n, tmp / "partial.safetensors"); }, "Unexpected key(s) in state_dict: \"extra\"");
  load(n, tmp / "partial.safetensors", /*strict=*/false);
  check_close(n->fc->weight, std::vector<double>(6, 0.0));

  Dict wrong;
  wrong.insert("0.weight", zeros({4, 4}));
  save_file(wrong, tmp / "wrong.safetensors");
  nn::Sequential m = mlp();
  check_error([&] { load(m, tmp / "wrong.safetensors", false); }, "size mismatch for 0.weight");
  check_error([&] { load(m, tmp / "missing.safetensors"); }, "cannot open");
}

TEST_CASE("test_module_serialize: weights saved by PyTorch give PyTorch's output") {
  // make_module_fixture.py: torch.nn.Sequential(Linear(3, 4), ReLU(), Linear(4, 2)) and its output.
  TempDir tmp;
  std::vector<uint8_t> bytes(std::begin(kTorchMlp), std::end(kTorchMlp));
  std::string path = tmp / "torch_mlp.safetensors";
  {
    Dict d = deserialize_safetensors(bytes);
    save_file(d, path);  // re-written by ember: the bytes' values survive a second trip
  }
  nn::Sequential m = mlp();
  load(m, path);
  Tensor x =
      from_values(std::vector<double>(std::begin(kTorchMlpInput), std::end(kTorchMlpInput)), {2, 3}, kFloat);
  check_close(m->forward(x), std::vector<double>(std::begin(kTorchMlpOutput), std::end(kTorchMlpOutput)),
              1e-6, 1e-5);
}
