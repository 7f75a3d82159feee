// ParameterList and ParameterDict (nn/modules/parameter_containers.h): registration under
// positions / keys, requires_grad kept as the tensor has it, state_dict and named_parameters
// keys as PyTorch's, clone sharing nothing, reprs as Python prints them (the expected strings
// are what PyTorch 2.9 printed for the same containers, e.g.
//   repr(torch.nn.ParameterList([nn.Parameter(torch.zeros(3, 4)), ...]))), and the errors.
#include <sstream>

#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/parameter_containers.h"
#include "ember/optim/sgd.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_error;
using ember::test::values;

namespace {

struct HolderImpl : nn::Cloneable<HolderImpl> {
  HolderImpl() { reset(); }
  void reset() override {
    pl = register_module("pl", nn::ParameterList(zeros({3, 4}).requires_grad_(), zeros({2}, kDouble)));
    lin = register_module("lin", nn::Linear(2, 3));
  }
  nn::ParameterList pl{nullptr};
  nn::Linear lin{nullptr};
};
EMBER_MODULE(Holder);

std::string repr(const nn::Module& m) {
  std::ostringstream s;
  s << m;
  return s.str();
}

}  // namespace

TEST_CASE("test_parameter_containers: a ParameterList registers under positions, requires_grad as given") {
  nn::ParameterList list(ones({2}).requires_grad_(), zeros({3}));
  list->append(full({1}, 5.0).requires_grad_());
  CHECK(list->size() == 3);
  CHECK_FALSE(list->is_empty());
  CHECK(list->named_parameters().keys() == std::vector<std::string>{"0", "1", "2"});
  CHECK(list[0].requires_grad());
  CHECK_FALSE(list[1].requires_grad());
  CHECK(values(list->at(2)) == std::vector<double>{5});
  // The handles are the registered ones: writing through at() changes what parameters() sees.
  list->at(1) = full({3}, 7.0);
  CHECK(values(list->named_parameters()["1"]) == std::vector<double>{7, 7, 7});
  CHECK(nn::ParameterList()->is_empty());
  check_error([&] { list->at(3); }, "Index out of range");
}

TEST_CASE("test_parameter_containers: extend, += and iteration keep order") {
  nn::ParameterList a(ones({1}));
  nn::ParameterList b(full({1}, 2.0), full({1}, 3.0));
  a->extend(*b);
  *a += std::vector<Tensor>{full({1}, 4.0)};
  std::vector<double> seen;
  for (const auto& item : *a) seen.push_back(item.value().item<double>());
  CHECK(seen == std::vector<double>{1, 2, 3, 4});
  CHECK(a->named_parameters().keys() == std::vector<std::string>{"0", "1", "2", "3"});
}

TEST_CASE("test_parameter_containers: nested in a module, keys and repr are PyTorch's") {
  Holder h;
  CHECK(h->state_dict().keys() == std::vector<std::string>{"pl.0", "pl.1", "lin.weight", "lin.bias"});
  CHECK(repr(*h->pl) ==
        "ParameterList(\n"
        "    (0): Parameter containing: [torch.float32 of size 3x4]\n"
        "    (1): Parameter containing: [torch.float64 of size 2]\n"
        ")");
  CHECK(repr(*h) ==
        "Holder(\n"
        "  (pl): ParameterList(\n"
        "      (0): Parameter containing: [torch.float32 of size 3x4]\n"
        "      (1): Parameter containing: [torch.float64 of size 2]\n"
        "  )\n"
        "  (lin): Linear(in_features=2, out_features=3, bias=True)\n"
        ")");
  CHECK(repr(*nn::ParameterList()) == "ParameterList()");
}

TEST_CASE("test_parameter_containers: an optimizer trains the list's parameters") {
  nn::ParameterList list(full({2}, 1.0).requires_grad_());
  optim::SGD sgd(list->parameters(), optim::SGDOptions(0.5));
  list[0].sum().backward();
  sgd.step();
  CHECK(values(list[0]) == std::vector<double>{0.5, 0.5});
}

TEST_CASE("test_parameter_containers: a clone copies the parameters and shares nothing") {
  nn::ParameterList list(full({2}, 1.0).requires_grad_(), zeros({1}));
  auto copy = std::dynamic_pointer_cast<nn::ParameterListImpl>(list->clone());
  REQUIRE(copy != nullptr);
  CHECK(copy->size() == 2);
  CHECK((*copy)[0].requires_grad());
  CHECK_FALSE((*copy)[1].requires_grad());
  {
    NoGradGuard no_grad;
    list[0].fill_(9.0);
  }
  CHECK(values((*copy)[0]) == std::vector<double>{1, 1});

  nn::ParameterDict dict;
  dict->insert("w", ones({2}).requires_grad_());
  auto dcopy = std::dynamic_pointer_cast<nn::ParameterDictImpl>(dict->clone());
  REQUIRE(dcopy != nullptr);
  CHECK(dcopy->keys() == std::vector<std::string>{"w"});
  CHECK(dcopy->get("w").data_ptr() != dict->get("w").data_ptr());
}

TEST_CASE("test_parameter_containers: a ParameterDict keeps insertion order; insert, pop, update, clear") {
  OrderedDict<std::string, Tensor> init;
  init.insert("b", zeros({3}).requires_grad_());
  init.insert("a", zeros({}));
  nn::ParameterDict dict(init);
  CHECK(dict->keys() == std::vector<std::string>{"b", "a"});
  CHECK(dict->get("b").requires_grad());
  CHECK_FALSE(dict["a"].requires_grad());
  CHECK(repr(*dict) ==
        "ParameterDict(\n"
        "    (b): Parameter containing: [torch.FloatTensor of size 3]\n"
        "    (a): Parameter containing: [torch.FloatTensor of size ]\n"
        ")");
  check_error([&] { dict->insert("a", ones({1})); }, "Parameter 'a' already defined");
  check_error([&] { dict->get("c"); }, "Parameter 'c' is not defined");

  Tensor b = dict->pop("b");
  CHECK(b.numel() == 3);
  CHECK(dict->keys() == std::vector<std::string>{"a"});
  check_error([&] { dict->pop("b"); }, "Parameter 'b' is not defined");

  OrderedDict<std::string, Tensor> more;
  more.insert("a", full({1}, 2.0));
  more.insert("c", full({1}, 3.0));
  dict->update(more);
  CHECK(dict->keys() == std::vector<std::string>{"a", "c"});
  CHECK(values(dict["a"]) == std::vector<double>{2});
  CHECK(dict->contains("c"));
  CHECK(dict->size() == 2);
  CHECK(dict->values().size() == 2);
  dict->clear();
  CHECK(dict->empty());
  CHECK(dict->parameters().empty());
}
