// Shape ops on CUDA: the copying ones (cat, stack, repeat, flip, roll, tril/triu and their
// in-place forms), views and their gradients, and the host-value corners: printing, item()
// and saving/loading CUDA tensors.
#include <cstdio>
#include <filesystem>
#include <string>

#include "cuda/parity.h"

using namespace ember;
using namespace ember::test;

TEST_CASE("cuda shape: cat for every dtype, any dim, mixed dtypes, strided inputs") {
  for (ScalarType t : kAllTypes) {
    check_parity([](const TensorList& x) { return cat({x[0], x[1]}, 0); }, {make_input({2, 5}, t), make_input({3, 5}, t)});
    check_parity([](const TensorList& x) { return cat({x[0], x[1], x[0]}, -1); },
                 {make_input({4, 2}, t), make_input({4, 7}, t)});
  }
  check_parity([](const TensorList& x) { return cat({x[0].t(), x[1].slice(0, 0, 6, 2)}, 1); },
               {make_input({3, 4}, kFloat), make_input({6, 5}, kFloat)});
  check_parity([](const TensorList& x) { return cat({x[0], x[1], x[2]}, 1); },
               {make_input({2, 3}, kInt32), make_input({2, 1}, kHalf), make_input({2, 2}, kDouble)});
  // Legacy: 1-d empty tensors are skipped whatever their shape.
  check_parity([](const TensorList& x) { return cat({x[0], x[1]}, 0); }, {make_input({0}, kFloat), make_input({2, 3}, kFloat)});
  check_parity([](const TensorList& x) { return cat({x[0], x[1]}, 0); },
               {make_input({1 << 19, 2}, kFloat), make_input({3, 2}, kFloat)});
  for (ScalarType t : kFloatTypes)
    check_grad_parity([](const TensorList& x) { return cat({x[0], x[1]}, 1); }, {make_input({3, 2}, t), make_input({3, 4}, t)});
  check_error_parity([](const TensorList& x) { return cat({x[0], x[1]}, 0); }, {make_input({2, 3}, kFloat), make_input({2, 4}, kFloat)});
}

TEST_CASE("cuda shape: stack") {
  for (ScalarType t : kAllTypes)
    for (int64_t dim : {0, 1, 2, -1})
      check_parity([dim](const TensorList& x) { return stack({x[0], x[1], x[2]}, dim); },
                   {make_input({3, 4}, t), make_input({3, 4}, t), make_input({3, 4}, t)});
  check_parity([](const TensorList& x) { return stack({x[0].t(), x[1].t()}, 1); }, {make_input({5, 2}, kHalf), make_input({5, 2}, kHalf)});
  check_parity([](const TensorList& x) { return stack({x[0], x[0]}); }, {make_input({}, kFloat)});
  for (ScalarType t : kFloatTypes)
    check_grad_parity([](const TensorList& x) { return stack({x[0], x[1]}, 1); }, {make_input({2, 3}, t), make_input({2, 3}, t)});
}

TEST_CASE("cuda shape: repeat") {
  for (ScalarType t : kAllTypes) {
    check_parity([](const TensorList& x) { return x[0].repeat({2, 3}); }, {make_input({3, 4}, t)});
    check_parity([](const TensorList& x) { return x[0].repeat({2, 1, 2}); }, {make_input({3, 4}, t)});
  }
  check_parity([](const TensorList& x) { return x[0].t().repeat({1, 2}); }, {make_input({3, 5}, kFloat)});
  check_parity([](const TensorList& x) { return x[0].repeat({4}); }, {make_input({}, kInt64)});
  check_parity([](const TensorList& x) { return x[0].repeat({0, 2}); }, {make_input({3}, kFloat)});
  check_parity([](const TensorList& x) { return x[0].repeat({1 << 18, 1}); }, {make_input({1, 4}, kFloat)});
  for (ScalarType t : kFloatTypes)
    check_grad_parity([](const TensorList& x) { return x[0].repeat({2, 1, 3}); }, {make_input({2, 3}, t)});
  check_error_parity([](const TensorList& x) { return x[0].repeat({2}); }, {make_input({2, 3}, kFloat)});
}

TEST_CASE("cuda shape: flip reads through negative strides") {
  for (ScalarType t : kAllTypes) {
    check_parity([](const TensorList& x) { return x[0].flip({0}); }, {make_input({5, 3}, t)});
    check_parity([](const TensorList& x) { return x[0].flip({0, -1}); }, {make_input({2, 3, 4}, t)});
  }
  check_parity([](const TensorList& x) { return x[0].t().flip({1}); }, {make_input({4, 6}, kHalf)});
  check_parity([](const TensorList& x) { return x[0].flip({0}); }, {make_input({}, kFloat)});
  check_parity([](const TensorList& x) { return x[0].flip({1}); }, {make_input({3, 0}, kFloat)});
  check_parity([](const TensorList& x) { return x[0].flip({0}); }, {make_input({1 << 20 | 3}, kFloat)});
  for (ScalarType t : kFloatTypes)
    check_grad_parity([](const TensorList& x) { return x[0].flip({1}); }, {make_input({3, 4}, t)});
}

TEST_CASE("cuda shape: roll") {
  for (ScalarType t : kAllTypes) {
    check_parity([](const TensorList& x) { return x[0].roll({2}, {1}); }, {make_input({3, 5}, t)});
    check_parity([](const TensorList& x) { return x[0].roll({-1, 7}, {0, 1}); }, {make_input({3, 5}, t)});
    check_parity([](const TensorList& x) { return x[0].roll({4}); }, {make_input({3, 5}, t)});  // flattened
  }
  check_parity([](const TensorList& x) { return x[0].t().roll({1}, {0}); }, {make_input({3, 5}, kFloat)});
  check_parity([](const TensorList& x) { return x[0].roll({1000}, {0}); }, {make_input({1 << 20 | 3}, kFloat)});
  for (ScalarType t : kFloatTypes)
    check_grad_parity([](const TensorList& x) { return x[0].roll({1, -2}, {0, 1}); }, {make_input({3, 4}, t)});
}

TEST_CASE("cuda shape: tril and triu for every dtype and diagonal") {
  for (ScalarType t : kAllTypes) {
    for (int64_t k : {-2, -1, 0, 1, 3, 10}) {
      check_parity([k](const TensorList& x) { return x[0].tril(k); }, {make_input({5, 7}, t)});
      check_parity([k](const TensorList& x) { return x[0].triu(k); }, {make_input({5, 7}, t)});
    }
    check_parity([](const TensorList& x) { return x[0].tril(); }, {make_input({2, 3, 6, 4}, t)});
    check_parity([](const TensorList& x) { return x[0].triu(1); }, {make_input({3, 4, 4}, t)});
  }
  // Strided inputs and in-place forms on strided views.
  check_parity([](const TensorList& x) { return x[0].transpose(1, 2).tril(-1); }, {make_input({2, 5, 6}, kFloat)});
  check_parity([](const TensorList& x) { return x[0].permute({2, 0, 1}).triu(); }, {make_input({4, 5, 3}, kHalf)});
  check_parity(
      [](const TensorList& x) {
        Tensor y = x[0].clone();
        y.t().tril_(1);
        y.slice(0, 0, 6, 2).triu_(-1);
        return y;
      },
      {make_input({6, 6}, kDouble)});
  check_parity([](const TensorList& x) { return x[0].tril(); }, {make_input({0, 3}, kFloat)});
  check_parity([](const TensorList& x) { return x[0].triu(); }, {make_input({1030, 1030}, kFloat)});
  for (ScalarType t : kFloatTypes) {
    check_grad_parity([](const TensorList& x) { return x[0].tril(1); }, {make_input({4, 4}, t)});
    check_grad_parity([](const TensorList& x) { return x[0].triu(-1); }, {make_input({2, 3, 5}, t)});
  }
  check_error_parity([](const TensorList& x) { return x[0].tril(); }, {make_input({4}, kFloat)});
}

TEST_CASE("cuda shape: views share storage and their gradients flow back") {
  for (ScalarType t : {kFloat, kHalf, kInt64, kBool}) {
    check_parity([](const TensorList& x) { return x[0].view({4, 6}).contiguous(); }, {make_input({2, 3, 4}, t)});
    check_parity([](const TensorList& x) { return x[0].permute({2, 0, 1}).reshape({-1}); }, {make_input({2, 3, 4}, t)});
    check_parity([](const TensorList& x) { return x[0].diagonal(1).contiguous(); }, {make_input({4, 5}, t)});
    check_parity([](const TensorList& x) { return x[0].unfold(1, 3, 2).contiguous(); }, {make_input({3, 8}, t)});
    check_parity([](const TensorList& x) { return x[0].as_strided({3, 3}, {1, 2}, 1).contiguous(); }, {make_input({12}, t)});
    check_parity([](const TensorList& x) { return x[0].expand({3, 2, 4}).contiguous(); }, {make_input({2, 1}, t)});
  }
  // A view of a CUDA tensor is a CUDA tensor on the same storage.
  Tensor base = zeros({4, 4}, TensorOptions().device(cuda_device()));
  Tensor v = base.select(0, 1);
  CHECK(v.is_cuda());
  CHECK(v.is_alias_of(base));
  v.fill_(3);
  CHECK(base.sum().item<double>() == 12.0);
  for (ScalarType t : kFloatTypes) {
    check_grad_parity([](const TensorList& x) { return x[0].select(1, 2); }, {make_input({3, 4}, t)});
    check_grad_parity([](const TensorList& x) { return x[0].slice(0, 1, 5, 2).t(); }, {make_input({6, 3}, t)});
    check_grad_parity([](const TensorList& x) { return x[0].diagonal(-1); }, {make_input({4, 4}, t)});
    check_grad_parity([](const TensorList& x) { return x[0].unfold(0, 3, 1); }, {make_input({6, 2}, t)});
    check_grad_parity([](const TensorList& x) { return x[0].as_strided({2, 3}, {1, 1}); }, {make_input({6}, t)});
    check_grad_parity([](const TensorList& x) { return x[0].unsqueeze(1).expand({3, 4, 2}); }, {make_input({3, 2}, t)});
    check_grad_parity([](const TensorList& x) { return cat(x[0].chunk(2, 1), 0); }, {make_input({2, 6}, t)});
  }
}

TEST_CASE("cuda shape: printing copies to the CPU and names the device") {
  for (ScalarType t : {kFloat, kHalf, kInt64, kBool, kDouble}) {
    Tensor x = make_input({2, 2}, t);
    std::string cpu_str = x.toString(), cuda_str = x.to(cuda_device()).toString();
    // PyTorch puts the device first among the suffixes: tensor([...], device='cuda:0', dtype=...).
    std::string want = cpu_str;
    size_t at = want.find(", dtype=");
    if (at == std::string::npos) at = want.size() - 1;  // before the closing parenthesis
    want.insert(at, ", device='cuda:0'");
    CHECK(cuda_str == want);
  }
  Tensor e = empty({0}, TensorOptions().device(cuda_device()));
  CHECK(e.toString() == "tensor([], device='cuda:0')");
  Tensor s = full({}, 2.5, TensorOptions().device(cuda_device()).requires_grad(true));
  CHECK(s.toString() == "tensor(2.5000, device='cuda:0', requires_grad=True)");
  Tensor big = arange(2000, TensorOptions().device(cuda_device()));
  CHECK(big.toString().find("...") != std::string::npos);
}

TEST_CASE("cuda shape: item() reads one element back for every dtype") {
  for (ScalarType t : kAllTypes) {
    Tensor x = make_input({3, 2}, t);
    Tensor g = x.to(cuda_device());
    CHECK(g.select(0, 2).select(0, 1).item().toDouble() == x.select(0, 2).select(0, 1).item().toDouble());
    CHECK(g.sum().item().toDouble() == doctest::Approx(x.sum().item().toDouble()).epsilon(1e-2));
  }
  CHECK(full({1, 1}, 7, TensorOptions().device(cuda_device())).item<int64_t>() == 7);
}

TEST_CASE("cuda shape: save copies CUDA tensors to the CPU; load maps them to a device") {
  std::string path = (std::filesystem::temp_directory_path() / "ember_cuda_save_test.safetensors").string();
  Tensor a = make_input({3, 4}, kHalf).to(cuda_device());
  Tensor b = make_input({5}, kInt64).to(cuda_device()).slice(0, 0, 5, 2);  // non-contiguous
  save(std::vector<Tensor>{a, b}, path);
  std::vector<Tensor> back;
  load(back, path);
  REQUIRE(back.size() == 2);
  CHECK(back[0].is_cpu());
  check_same(a, back[0], Tol{0, 0});
  check_same(b, back[1], Tol{0, 0});
  load(back, path, cuda_device());
  CHECK(back[0].is_cuda());
  check_same(back[0], a.cpu(), Tol{0, 0});
  OrderedDict<std::string, Tensor> d = load_file(path, cuda_device());
  CHECK(d[size_t{1}].value().is_cuda());
  check_same(d[size_t{1}].value(), b.cpu(), Tol{0, 0});
  std::vector<uint8_t> bytes = serialize_safetensors(OrderedDict<std::string, Tensor>{{"a", a}});
  check_same(a, deserialize_safetensors(bytes)[size_t{0}].value(), Tol{0, 0});
  std::remove(path.c_str());
}
