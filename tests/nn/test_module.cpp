// nn::Module, ModuleHolder, Cloneable and the containers: the module tree and its dotted
// names, train/eval, to(dtype) keeping parameter identity, zero_grad, state_dict order and
// load_state_dict errors, repr text, clone. Expected strings come from PyTorch 1.13
// (tests/nn/fixtures/make_module_expected.py prints them).
#include <sstream>

#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/linear.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::from_values;
using ember::test::values;

namespace {

struct NetImpl : nn::Cloneable<NetImpl> {
  NetImpl() { reset(); }
  void reset() override {
    features = register_module("features", nn::Sequential(nn::Linear(2, 3), nn::ReLU()));
    blocks = register_module("blocks", nn::ModuleList(nn::Linear(3, 3), nn::Tanh()));
    heads = register_module("heads", nn::ModuleDict({{"a", nn::Linear(3, 1)}, {"b", nn::LeakyReLU()}}));
    fc = register_module("fc", nn::Linear(3, 4));
    steps = register_buffer("steps", zeros({1}));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = features->forward(x);
    h = blocks->ptr<nn::TanhImpl>(1)->forward(blocks->at<nn::LinearImpl>(0).forward(h));
    return fc(h);
  }
  nn::Sequential features = nullptr;
  nn::ModuleList blocks = nullptr;
  nn::ModuleDict heads = nullptr;
  nn::Linear fc = nullptr;
  Tensor steps;
};
EMBER_MODULE(Net);

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

std::vector<std::string> keys_of(const OrderedDict<std::string, Tensor>& d) { return d.keys(); }

// A plain Module (not Cloneable) with one parameter.
struct Small : nn::Module {
  Small() { fc = register_module("fc", nn::Linear(4, 3)); }
  nn::Linear fc = nullptr;
};

}  // namespace

TEST_CASE("test_module: names come from the class, without Impl or namespace") {
  CHECK(nn::LinearImpl(2, 3).name() == "Linear");
  CHECK(Net()->name() == "Net");
  CHECK(nn::Sequential()->name() == "Sequential");
  CHECK(nn::Module("Custom").name() == "Custom");
  CHECK(Small().name() == "Small");
}

TEST_CASE("test_module: named_parameters, buffers and state_dict keys follow PyTorch's order") {
  Net net;
  // PyTorch: [k for k, _ in net.named_parameters()]
  std::vector<std::string> params = {"features.0.weight", "features.0.bias", "blocks.0.weight", "blocks.0.bias",
                                     "heads.a.weight",    "heads.a.bias",    "fc.weight",       "fc.bias"};
  CHECK(keys_of(net->named_parameters()) == params);
  CHECK(net->parameters().size() == 8);
  CHECK(keys_of(net->named_parameters(/*recurse=*/false)).empty());
  CHECK(keys_of(net->fc->named_parameters(false)) == std::vector<std::string>{"weight", "bias"});
  CHECK(keys_of(net->named_buffers()) == std::vector<std::string>{"steps"});
  // PyTorch: list(net.state_dict().keys()) — own buffers before the children's entries.
  std::vector<std::string> state = {"steps",          "features.0.weight", "features.0.bias", "blocks.0.weight",
                                    "blocks.0.bias",  "heads.a.weight",    "heads.a.bias",    "fc.weight",
                                    "fc.bias"};
  CHECK(keys_of(net->state_dict()) == state);
  // The parameter handles are the module's own tensors.
  CHECK(net->named_parameters()["fc.weight"].is_same(net->fc->weight));
  CHECK(net->fc->weight.requires_grad());
}

TEST_CASE("test_module: children, modules and apply walk the tree in pre-order") {
  Net net;
  CHECK(net->children().size() == 4);
  CHECK(net->named_children().keys() == std::vector<std::string>{"features", "blocks", "heads", "fc"});
  auto named = net->named_modules();
  std::vector<std::string> expected = {"",        "features", "features.0", "features.1", "blocks", "blocks.0",
                                       "blocks.1", "heads",   "heads.a",    "heads.b",    "fc"};
  CHECK(named.keys() == expected);
  CHECK(named[""].get() == net.get());
  CHECK(net->modules().size() == 11);
  CHECK(net->modules(/*include_self=*/false).size() == 10);
  CHECK(net->named_modules("net", false).keys().front() == "net.features");
  int linears = 0;
  net->apply([&](nn::Module& m) { linears += m.as<nn::Linear>() != nullptr; });
  CHECK(linears == 4);
  std::vector<std::string> names;
  net->apply([&](const std::string& name, nn::Module&) { names.push_back(name); }, "root");
  CHECK(names[2] == "root.features.0");
  // modules() needs the root in a shared_ptr.
  Small small;
  check_error([&] { small.modules(); }, "top-level module as a shared_ptr");
  CHECK(small.modules(false).size() == 1);
}

TEST_CASE("test_module: registration errors use libtorch's texts") {
  nn::Module m("M");
  check_error([&] { m.register_parameter("", zeros({1})); }, "Parameter name must not be empty");
  check_error([&] { m.register_parameter("a.b", zeros({1})); }, "Parameter name must not contain a dot (got 'a.b')");
  m.register_parameter("w", zeros({1}));
  check_error([&] { m.register_parameter("w", zeros({1})); }, "Parameter 'w' already defined");
  check_error([&] { m.register_buffer("", zeros({1})); }, "Buffer name must not be empty");
  check_error([&] { m.register_buffer("x.y", zeros({1})); }, "Buffer name must not contain a dot (got 'x.y')");
  check_error([&] { m.register_module("", nn::ReLU()); }, "Submodule name must not be empty");
  check_error([&] { m.register_module("a.b", nn::ReLU()); }, "Submodule name must not contain a dot (got 'a.b')");
  m.register_module("act", nn::ReLU());
  check_error([&] { m.register_module("act", nn::ReLU()); }, "Submodule 'act' already defined");
  // requires_grad=false parameters are registered as given.
  Tensor& frozen = m.register_parameter("frozen", zeros({2}), /*requires_grad=*/false);
  CHECK_FALSE(frozen.requires_grad());
  // replace / unregister.
  auto tanh = m.replace_module("act", nn::Tanh());
  CHECK(m.named_children()["act"].get() == tanh.get());
  m.unregister_module("act");
  CHECK(m.children().empty());
  check_error([&] { m.unregister_module("act"); }, "No Module with name `act` is registered");
}

TEST_CASE("test_module: train and eval reach every descendant") {
  Net net;
  CHECK(net->is_training());
  net->eval();
  for (const auto& m : net->modules()) CHECK_FALSE(m->is_training());
  net->train();
  for (const auto& m : net->modules()) CHECK(m->is_training());
  net->features->train(false);
  CHECK_FALSE(net->features[0]->is_training());
  CHECK(net->fc->is_training());
}

TEST_CASE("test_module: to(dtype) converts in place, keeping every handle") {
  Net net;
  std::vector<Tensor> params = net->parameters();  // as an optimizer would hold them
  Tensor w_before = net->fc->weight.clone();
  net->fc(ones({1, 3})).sum().backward();
  net->to(kDouble);
  for (const Tensor& p : params) {
    CHECK(p.dtype() == kDouble);
    CHECK(p.requires_grad());
    CHECK(p.is_leaf());
  }
  CHECK(params[6].is_same(net->fc->weight));
  CHECK(net->fc->weight.grad().dtype() == kDouble);
  CHECK(net->steps.dtype() == kDouble);
  check_close(net->fc->weight, w_before.to(kDouble));
  // The converted module still trains: gradients flow into the same handles.
  net->zero_grad();
  net->forward(ones({2, 2}, kDouble)).sum().backward();
  CHECK(params[0].grad().defined());
  CHECK(params[0].grad().dtype() == kDouble);
  // Integer buffers keep their dtype.
  nn::Module m("M");
  m.register_buffer("count", zeros({1}, kLong));
  m.to(kFloat);
  CHECK(m.named_buffers()["count"].dtype() == kLong);
  net->to(Device(kCPU));
  CHECK(net->fc->weight.device() == Device(kCPU));
}

TEST_CASE("test_module: zero_grad sets gradients to none or to zero") {
  nn::Linear fc(3, 2);
  fc(ones({4, 3})).sum().backward();
  CHECK(fc->weight.grad().defined());
  fc->zero_grad(/*set_to_none=*/false);
  check_close(fc->weight.grad(), zeros({2, 3}));
  CHECK(fc->bias.grad().defined());
  fc->zero_grad();
  CHECK_FALSE(fc->weight.grad().defined());
  CHECK_FALSE(fc->bias.grad().defined());
}

TEST_CASE("test_module: state_dict shares storage; load_state_dict copies in") {
  Net a, b;
  auto sd = a->state_dict();
  CHECK(sd["fc.weight"].is_alias_of(a->fc->weight));
  CHECK_FALSE(sd["fc.weight"].requires_grad());
  Tensor b_weight = b->fc->weight;
  auto result = b->load_state_dict(sd);
  CHECK(result.missing_keys.empty());
  CHECK(result.unexpected_keys.empty());
  CHECK(b->fc->weight.is_same(b_weight));  // copied into, not replaced
  CHECK(b->fc->weight.requires_grad());
  check_close(b->fc->weight, a->fc->weight);
  check_close(b->features[0]->named_parameters()["bias"], a->features[0]->named_parameters()["bias"]);
  // Writing to a state dict tensor writes to the module (shared storage).
  NoGradGuard no_grad;
  sd["steps"].fill_(5);
  CHECK(a->steps.item<double>() == 5);
}

TEST_CASE("test_module: load_state_dict errors match PyTorch's text") {
  auto small = std::make_shared<Small>();
  OrderedDict<std::string, Tensor> sd;
  sd.insert("fc.weight", zeros({4, 3}));
  sd.insert("x", zeros({1}));
  // PyTorch 1.13 (fixtures/make_module_expected.py):
  check_error([&] { small->load_state_dict(sd); },
              "Error(s) in loading state_dict for Small:\n\tMissing key(s) in state_dict: \"fc.bias\". \n\t"
              "Unexpected key(s) in state_dict: \"x\". \n\tsize mismatch for fc.weight: copying a param with "
              "shape torch.Size([4, 3]) from checkpoint, the shape in current model is torch.Size([3, 4]).");
  // Non-strict still fails on a shape mismatch, without the key lists.
  bool threw = false;
  try {
    small->load_state_dict(sd, /*strict=*/false);
  } catch (const Error& e) {
    threw = true;
    CHECK(std::string(e.what()).find(
              "Error(s) in loading state_dict for Small:\n\tsize mismatch for fc.weight: copying a param with shape "
              "torch.Size([4, 3]) from checkpoint, the shape in current model is torch.Size([3, 4]).") !=
          std::string::npos);
    CHECK(std::string(e.what()).find("Missing") == std::string::npos);
  }
  CHECK(threw);
  // Non-strict with matching shapes reports the key lists and loads what matches.
  OrderedDict<std::string, Tensor> partial;
  partial.insert("fc.weight", ones({3, 4}));
  partial.insert("extra", zeros({1}));
  auto result = small->load_state_dict(partial, false);
  CHECK(result.missing_keys == std::vector<std::string>{"fc.bias"});
  CHECK(result.unexpected_keys == std::vector<std::string>{"extra"});
  check_close(small->fc->weight, ones({3, 4}));
  check_error([&] { small->load_state_dict(partial); }, "Missing key(s) in state_dict: \"fc.bias\". ");
  // Values convert to the parameter's dtype, as copy_ does.
  OrderedDict<std::string, Tensor> doubles;
  doubles.insert("fc.weight", full({3, 4}, 2.0, kDouble));
  doubles.insert("fc.bias", full({3}, 3.0, kDouble));
  small->load_state_dict(doubles);
  CHECK(small->fc->weight.dtype() == kFloat);
  check_close(small->fc->bias, {3, 3, 3});
}

TEST_CASE("test_module: printing matches Python's repr") {
  Net net;
  // PyTorch 1.13: print(net) for the same tree.
  CHECK(repr(*net) ==
        "Net(\n"
        "  (features): Sequential(\n"
        "    (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "    (1): ReLU()\n"
        "  )\n"
        "  (blocks): ModuleList(\n"
        "    (0): Linear(in_features=3, out_features=3, bias=True)\n"
        "    (1): Tanh()\n"
        "  )\n"
        "  (heads): ModuleDict(\n"
        "    (a): Linear(in_features=3, out_features=1, bias=True)\n"
        "    (b): LeakyReLU(negative_slope=0.01)\n"
        "  )\n"
        "  (fc): Linear(in_features=3, out_features=4, bias=True)\n"
        ")");
  nn::Sequential seq(nn::Identity(), nn::Flatten(), nn::Unflatten(1, std::vector<int64_t>{2, 3}),
                     nn::Unflatten(1, std::vector<int64_t>{6}), nn::Bilinear(nn::BilinearOptions(2, 3, 4).bias(false)),
                     nn::ELU(), nn::GELU(nn::GELUOptions().approximate("tanh")), nn::SiLU(), nn::Sigmoid(),
                     nn::ReLU(nn::ReLUOptions(true)), nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true)));
  std::ostringstream os;
  os << seq;
  CHECK(os.str() ==
        "Sequential(\n"
        "  (0): Identity()\n"
        "  (1): Flatten(start_dim=1, end_dim=-1)\n"
        "  (2): Unflatten(dim=1, unflattened_size=(2, 3))\n"
        "  (3): Unflatten(dim=1, unflattened_size=(6,))\n"
        "  (4): Bilinear(in1_features=2, in2_features=3, out_features=4, bias=False)\n"
        "  (5): ELU(alpha=1.0)\n"
        "  (6): GELU(approximate='tanh')\n"
        "  (7): SiLU()\n"
        "  (8): Sigmoid()\n"
        "  (9): ReLU(inplace=True)\n"
        "  (10): LeakyReLU(negative_slope=0.2, inplace=True)\n"
        ")");
  CHECK(repr(*nn::LazyLinear(4)) == "LazyLinear(in_features=0, out_features=4, bias=True)");
  CHECK(repr(nn::Module("Empty")) == "Empty()");
  CHECK(repr(*nn::GELU()) == "GELU(approximate='none')");
}

TEST_CASE("test_module: python_float prints as Python's repr(float)") {
  // Python: [repr(x) for x in [0.01, 1.0, 1e-05, 0.0001, 1e16, 123456.789, 0.1 + 0.2, -2.5, 3e-4]]
  CHECK(nn::python_float(0.01) == "0.01");
  CHECK(nn::python_float(1.0) == "1.0");
  CHECK(nn::python_float(1e-5) == "1e-05");
  CHECK(nn::python_float(1e-4) == "0.0001");
  CHECK(nn::python_float(1e16) == "1e+16");
  CHECK(nn::python_float(123456.789) == "123456.789");
  CHECK(nn::python_float(0.1 + 0.2) == "0.30000000000000004");
  CHECK(nn::python_float(-2.5) == "-2.5");
  CHECK(nn::python_float(1e-4 * 3) == "0.00030000000000000003");
  CHECK(nn::python_float(100.0) == "100.0");
  CHECK(nn::python_float(0.0) == "0.0");
}

TEST_CASE("test_module: clone is a deep copy with the holders rewired") {
  Net net;
  net->eval();
  auto copy = std::dynamic_pointer_cast<NetImpl>(net->clone());
  REQUIRE(copy != nullptr);
  CHECK(keys_of(copy->state_dict()) == keys_of(net->state_dict()));
  for (const auto& item : net->named_parameters()) {
    Tensor c = copy->named_parameters()[item.key()];
    CHECK_FALSE(c.is_alias_of(item.value()));
    CHECK(c.requires_grad());
    check_close(c, item.value());
  }
  // The member holders point at the cloned children, not the originals.
  CHECK(copy->fc.get() != net->fc.get());
  CHECK(copy->fc->weight.is_same(copy->named_parameters()["fc.weight"]));
  CHECK(copy->features[0].get() == copy->named_modules()["features.0"].get());
  CHECK_FALSE(copy->is_training());
  // Forward agrees; then writing to the clone leaves the original alone.
  Tensor x = rand({5, 2});
  check_close(copy->forward(x), net->forward(x));
  {
    NoGradGuard no_grad;
    copy->fc->weight.fill_(7);
  }
  CHECK(net->fc->weight.max().item<double>() < 7);
  // A plain Module cannot be cloned.
  check_error([] { Small().clone(); }, "clone() has not been implemented for Small");
  // Sequential clone keeps names and types.
  nn::Sequential seq({{"lin", nn::Linear(2, 2)}, {"act", nn::ReLU()}});
  auto seq_copy = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  CHECK(seq_copy->named_children().keys() == std::vector<std::string>{"lin", "act"});
  CHECK(seq_copy->ptr<nn::LinearImpl>(0)->weight.defined());
  check_close(seq_copy->forward(x), seq->forward(x));
}

TEST_CASE("test_module: ModuleHolder semantics") {
  nn::Linear empty = nullptr;
  CHECK(empty.is_empty());
  CHECK_FALSE(static_cast<bool>(empty));
  check_error([&] { empty->weight; }, "Accessing empty ModuleHolder");
  nn::Linear fc(nn::LinearOptions(3, 2).bias(false));
  CHECK_FALSE(fc->bias.defined());
  CHECK(fc->named_parameters().keys() == std::vector<std::string>{"weight"});
  nn::Linear alias = fc;  // copies share the module
  CHECK(alias.get() == fc.get());
  CHECK(alias.ptr() == fc.ptr());
  CHECK((*fc).options.in_features() == 3);
  Tensor x = rand({4, 3});
  check_close(fc(x), x.matmul(fc->weight.t()));
  nn::Linear from_ptr(std::make_shared<nn::LinearImpl>(2, 2));
  CHECK(from_ptr->options.out_features() == 2);
  nn::ReLU relu;  // default-constructible modules need no arguments
  check_close(relu(from_values({-1, 2}, {2})), {0, 2});
}

TEST_CASE("test_module: Sequential, ModuleList and ModuleDict") {
  manual_seed(0);
  nn::Sequential seq(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2));
  CHECK(seq->size() == 3);
  Tensor x = rand({5, 3});
  auto l0 = seq->ptr<nn::LinearImpl>(0);
  auto l2 = seq->ptr<nn::LinearImpl>(2);
  Tensor expected = (x.matmul(l0->weight.t()) + l0->bias).relu().matmul(l2->weight.t()) + l2->bias;
  check_close(seq(x), expected);
  seq->push_back(nn::Tanh());
  seq->push_back("out", nn::Sigmoid());
  CHECK(seq->named_children().keys() == std::vector<std::string>{"0", "1", "2", "3", "out"});
  CHECK(seq[3]->name() == "Tanh");
  CHECK(seq->named_parameters().keys() == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  check_error([&] { seq->ptr(9); }, "Index out of range");
  check_error([&] { seq->ptr<nn::ReLUImpl>(0); }, "Attempted to cast module");
  check_error([] { nn::Sequential()->forward(zeros({1})); }, "Cannot call forward() on an empty Sequential");
  // Nested containers give nested dotted names.
  nn::Sequential outer(nn::Sequential(nn::Linear(1, 1)), nn::ModuleList(nn::Linear(1, 1)));
  CHECK(outer->named_parameters().keys() ==
        std::vector<std::string>{"0.0.weight", "0.0.bias", "1.0.weight", "1.0.bias"});

  nn::ModuleList list;
  list->push_back(nn::Linear(2, 2));
  list->push_back(std::make_shared<nn::ReLUImpl>());
  list->extend(*nn::ModuleList(nn::Tanh(), nn::Sigmoid()));
  CHECK(list->size() == 4);
  int count = 0;
  for (const auto& m : *list) count += m != nullptr;
  CHECK(count == 4);
  CHECK(list[2]->name() == "Tanh");
  list->insert(1, nn::Identity());
  CHECK(list[1]->name() == "Identity");
  CHECK(list->named_children().keys() == std::vector<std::string>{"0", "1", "2", "3", "4"});
  check_error([&] { list->ptr(7); }, "Index out of range");

  nn::ModuleDict dict({{"fc", nn::Linear(2, 3)}, {"act", nn::ReLU()}});
  CHECK(dict->keys() == std::vector<std::string>{"fc", "act"});
  CHECK(dict->contains("fc"));
  CHECK_FALSE(dict->contains("x"));
  CHECK(dict["act"]->name() == "ReLU");
  CHECK(dict->at<nn::LinearImpl>("fc").options.out_features() == 3);
  dict->update({{"act", std::make_shared<nn::TanhImpl>()}, {"out", std::make_shared<nn::SigmoidImpl>()}});
  CHECK(dict->keys() == std::vector<std::string>{"fc", "act", "out"});
  CHECK(dict["act"]->name() == "Tanh");
  CHECK(dict->pop("out")->name() == "Sigmoid");
  CHECK(dict->size() == 2);
  check_error([&] { dict["nope"]; }, "Module 'nope' is not defined");
  CHECK(dict->named_parameters().keys() == std::vector<std::string>{"fc.weight", "fc.bias"});
}
