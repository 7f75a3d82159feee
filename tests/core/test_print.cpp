// Printing: operator<< / toString must match PyTorch's str() character for character.
// Expected strings come from PyTorch 1.13; the generator is the Python list below with
// each C++ expression's Python twin (e.g. "tensor({kNaN, 1.})" <-> torch.tensor([nan, 1.])):
//   for expr, t in cases: print('{"%s", %s, %r},' % (expr, expr, str(t)))
// A = torch.tensor([1., 2.], requires_grad=True), B = torch.tensor([0.5, 0.25], requires_grad=True),
// W = torch.arange(12., requires_grad=True).
#include <limits>
#include <sstream>

#include "op_check.h"

using namespace ember;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

struct PrintCase {
  const char* expr;
  Tensor t;
  const char* expected;
};

void check_prints(const std::vector<PrintCase>& cases) {
  for (const PrintCase& c : cases) {
    INFO("expression: " << c.expr);
    CHECK(c.t.toString() == c.expected);
  }
}

}  // namespace

TEST_CASE("test_print: matches PyTorch's str()") {
  Tensor A = tensor({1., 2.}, requires_grad());
  Tensor B = tensor({0.5, 0.25}, requires_grad());
  Tensor W = arange(12., requires_grad());
  check_prints({
      {"tensor({1., 2., 3.})", tensor({1., 2., 3.}),
       "tensor([1., 2., 3.])"},
      {"tensor({1.5, -2.25, 3.125})", tensor({1.5, -2.25, 3.125}),
       "tensor([ 1.5000, -2.2500,  3.1250])"},
      {"tensor({0.1, 0.123456, 100.5})", tensor({0.1, 0.123456, 100.5}),
       "tensor([1.0000e-01, 1.2346e-01, 1.0050e+02])"},
      {"tensor({1e-5, 1.0, 1000.})", tensor({1e-5, 1.0, 1000.}),
       "tensor([1.0000e-05, 1.0000e+00, 1.0000e+03])"},
      {"tensor({0.00001234})", tensor({0.00001234}),
       "tensor([1.2340e-05])"},
      {"tensor({1e10, 1.})", tensor({1e10, 1.}),
       "tensor([1.0000e+10, 1.0000e+00])"},
      {"tensor({1e9, 1.5})", tensor({1e9, 1.5}),
       "tensor([1.0000e+09, 1.5000e+00])"},
      {"tensor({2., 3000.})", tensor({2., 3000.}),
       "tensor([2.0000e+00, 3.0000e+03])"},
      {"tensor({1., 1001.})", tensor({1., 1001.}),
       "tensor([1.0000e+00, 1.0010e+03])"},
      {"tensor({kNaN, kInf, -kInf, 1.5})", tensor({kNaN, kInf, -kInf, 1.5}),
       "tensor([   nan,    inf,   -inf, 1.5000])"},
      {"tensor({kNaN, 1., -2.})", tensor({kNaN, 1., -2.}),
       "tensor([nan,  1., -2.])"},
      {"tensor({-kNaN, kInf})", tensor({-kNaN, kInf}),
       "tensor([nan, inf])"},
      {"tensor({kNaN, 1e-6, 1.})", tensor({kNaN, 1e-6, 1.}),
       "tensor([       nan, 1.0000e-06, 1.0000e+00])"},
      {"tensor({0., 0.})", tensor({0., 0.}),
       "tensor([0., 0.])"},
      {"tensor({-0., 1.})", tensor({-0., 1.}),
       "tensor([-0., 1.])"},
      {"tensor({-1, 2, -300})", tensor({-1, 2, -300}),
       "tensor([  -1,    2, -300])"},
      {"tensor({{-1.5, 2.}, {3., -4.25}})", tensor({{-1.5, 2.}, {3., -4.25}}),
       "tensor([[-1.5000,  2.0000],\n        [ 3.0000, -4.2500]])"},
      {"arange(6).view({2, 3})", arange(6).view({2, 3}),
       "tensor([[0, 1, 2],\n        [3, 4, 5]])"},
      {"arange(24.).view({2, 3, 4})", arange(24.).view({2, 3, 4}),
       "tensor([[[ 0.,  1.,  2.,  3.],\n         [ 4.,  5.,  6.,  7.],\n         [ 8.,  9., 10., 11.]],\n\n        [[12., 13., 14., 15.],\n         [16., 17., 18., 19.],\n         [20., 21., 22., 23.]]])"},
      {"arange(8.).view({2, 2, 1, 2})", arange(8.).view({2, 2, 1, 2}),
       "tensor([[[[0., 1.]],\n\n         [[2., 3.]]],\n\n\n        [[[4., 5.]],\n\n         [[6., 7.]]]])"},
      {"arange(2000.)", arange(2000.),
       "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])"},
      {"arange(2000).view({2, 1000})", arange(2000).view({2, 1000}),
       "tensor([[   0,    1,    2,  ...,  997,  998,  999],\n        [1000, 1001, 1002,  ..., 1997, 1998, 1999]])"},
      {"arange(3000.).view({30, 100}) / 7", arange(3000.).view({30, 100}) / 7,
       "tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 1.3857e+01, 1.4000e+01,\n         1.4143e+01],\n        [1.4286e+01, 1.4429e+01, 1.4571e+01,  ..., 2.8143e+01, 2.8286e+01,\n         2.8429e+01],\n        [2.8571e+01, 2.8714e+01, 2.8857e+01,  ..., 4.2429e+01, 4.2571e+01,\n         4.2714e+01],\n        ...,\n        [3.8571e+02, 3.8586e+02, 3.8600e+02,  ..., 3.9957e+02, 3.9971e+02,\n         3.9986e+02],\n        [4.0000e+02, 4.0014e+02, 4.0029e+02,  ..., 4.1386e+02, 4.1400e+02,\n         4.1414e+02],\n        [4.1429e+02, 4.1443e+02, 4.1457e+02,  ..., 4.2814e+02, 4.2829e+02,\n         4.2843e+02]])"},
      {"arange(2000).view({10, 10, 20})", arange(2000).view({10, 10, 20}),
       "tensor([[[   0,    1,    2,  ...,   17,   18,   19],\n         [  20,   21,   22,  ...,   37,   38,   39],\n         [  40,   41,   42,  ...,   57,   58,   59],\n         ...,\n         [ 140,  141,  142,  ...,  157,  158,  159],\n         [ 160,  161,  162,  ...,  177,  178,  179],\n         [ 180,  181,  182,  ...,  197,  198,  199]],\n\n        [[ 200,  201,  202,  ...,  217,  218,  219],\n         [ 220,  221,  222,  ...,  237,  238,  239],\n         [ 240,  241,  242,  ...,  257,  258,  259],\n         ...,\n         [ 340,  341,  342,  ...,  357,  358,  359],\n         [ 360,  361,  362,  ...,  377,  378,  379],\n         [ 380,  381,  382,  ...,  397,  398,  399]],\n\n        [[ 400,  401,  402,  ...,  417,  418,  419],\n         [ 420,  421,  422,  ...,  437,  438,  439],\n         [ 440,  441,  442,  ...,  457,  458,  459],\n         ...,\n         [ 540,  541,  542,  ...,  557,  558,  559],\n         [ 560,  561,  562,  ...,  577,  578,  579],\n         [ 580,  581,  582,  ...,  597,  598,  599]],\n\n        ...,\n\n        [[1400, 1401, 1402,  ..., 1417, 1418, 1419],\n         [1420, 1421, 1422,  ..., 1437, 1438, 1439],\n         [1440, 1441, 1442,  ..., 1457, 1458, 1459],\n         ...,\n         [1540, 1541, 1542,  ..., 1557, 1558, 1559],\n         [1560, 1561, 1562,  ..., 1577, 1578, 1579],\n         [1580, 1581, 1582,  ..., 1597, 1598, 1599]],\n\n        [[1600, 1601, 1602,  ..., 1617, 1618, 1619],\n         [1620, 1621, 1622,  ..., 1637, 1638, 1639],\n         [1640, 1641, 1642,  ..., 1657, 1658, 1659],\n         ...,\n         [1740, 1741, 1742,  ..., 1757, 1758, 1759],\n         [1760, 1761, 1762,  ..., 1777, 1778, 1779],\n         [1780, 1781, 1782,  ..., 1797, 1798, 1799]],\n\n        [[1800, 1801, 1802,  ..., 1817, 1818, 1819],\n         [1820, 1821, 1822,  ..., 1837, 1838, 1839],\n         [1840, 1841, 1842,  ..., 1857, 1858, 1859],\n         ...,\n         [1940, 1941, 1942,  ..., 1957, 1958, 1959],\n         [1960, 1961, 1962,  ..., 1977, 1978, 1979],\n         [1980, 1981, 1982,  ..., 1997, 1998, 1999]]])"},
      {"arange(1001.).view({7, 11, 13})", arange(1001.).view({7, 11, 13}),
       "tensor([[[   0.,    1.,    2.,  ...,   10.,   11.,   12.],\n         [  13.,   14.,   15.,  ...,   23.,   24.,   25.],\n         [  26.,   27.,   28.,  ...,   36.,   37.,   38.],\n         ...,\n         [ 104.,  105.,  106.,  ...,  114.,  115.,  116.],\n         [ 117.,  118.,  119.,  ...,  127.,  128.,  129.],\n         [ 130.,  131.,  132.,  ...,  140.,  141.,  142.]],\n\n        [[ 143.,  144.,  145.,  ...,  153.,  154.,  155.],\n         [ 156.,  157.,  158.,  ...,  166.,  167.,  168.],\n         [ 169.,  170.,  171.,  ...,  179.,  180.,  181.],\n         ...,\n         [ 247.,  248.,  249.,  ...,  257.,  258.,  259.],\n         [ 260.,  261.,  262.,  ...,  270.,  271.,  272.],\n         [ 273.,  274.,  275.,  ...,  283.,  284.,  285.]],\n\n        [[ 286.,  287.,  288.,  ...,  296.,  297.,  298.],\n         [ 299.,  300.,  301.,  ...,  309.,  310.,  311.],\n         [ 312.,  313.,  314.,  ...,  322.,  323.,  324.],\n         ...,\n         [ 390.,  391.,  392.,  ...,  400.,  401.,  402.],\n         [ 403.,  404.,  405.,  ...,  413.,  414.,  415.],\n         [ 416.,  417.,  418.,  ...,  426.,  427.,  428.]],\n\n        ...,\n\n        [[ 572.,  573.,  574.,  ...,  582.,  583.,  584.],\n         [ 585.,  586.,  587.,  ...,  595.,  596.,  597.],\n         [ 598.,  599.,  600.,  ...,  608.,  609.,  610.],\n         ...,\n         [ 676.,  677.,  678.,  ...,  686.,  687.,  688.],\n         [ 689.,  690.,  691.,  ...,  699.,  700.,  701.],\n         [ 702.,  703.,  704.,  ...,  712.,  713.,  714.]],\n\n        [[ 715.,  716.,  717.,  ...,  725.,  726.,  727.],\n         [ 728.,  729.,  730.,  ...,  738.,  739.,  740.],\n         [ 741.,  742.,  743.,  ...,  751.,  752.,  753.],\n         ...,\n         [ 819.,  820.,  821.,  ...,  829.,  830.,  831.],\n         [ 832.,  833.,  834.,  ...,  842.,  843.,  844.],\n         [ 845.,  846.,  847.,  ...,  855.,  856.,  857.]],\n\n        [[ 858.,  859.,  860.,  ...,  868.,  869.,  870.],\n         [ 871.,  872.,  873.,  ...,  881.,  882.,  883.],\n         [ 884.,  885.,  886.,  ...,  894.,  895.,  896.],\n         ...,\n         [ 962.,  963.,  964.,  ...,  972.,  973.,  974.],\n         [ 975.,  976.,  977.,  ...,  985.,  986.,  987.],\n         [ 988.,  989.,  990.,  ...,  998.,  999., 1000.]]])"},
      {"arange(30.) * 1.5", arange(30.) * 1.5,
       "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])"},
      {"arange(100)", arange(100),
       "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n        36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,\n        54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n        72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,\n        90, 91, 92, 93, 94, 95, 96, 97, 98, 99])"},
      {"arange(40.).view({2, 20}) / 3", arange(40.).view({2, 20}) / 3,
       "tensor([[ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n          2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n          5.3333,  5.6667,  6.0000,  6.3333],\n        [ 6.6667,  7.0000,  7.3333,  7.6667,  8.0000,  8.3333,  8.6667,  9.0000,\n          9.3333,  9.6667, 10.0000, 10.3333, 10.6667, 11.0000, 11.3333, 11.6667,\n         12.0000, 12.3333, 12.6667, 13.0000]])"},
      {"ones({2}, requires_grad())", ones({2}, requires_grad()),
       "tensor([1., 1.], requires_grad=True)"},
      {"A + B", A + B,
       "tensor([1.5000, 2.2500], grad_fn=<AddBackward0>)"},
      {"W * 2.5", W * 2.5,
       "tensor([ 0.0000,  2.5000,  5.0000,  7.5000, 10.0000, 12.5000, 15.0000, 17.5000,\n        20.0000, 22.5000, 25.0000, 27.5000], grad_fn=<MulBackward0>)"},
      {"(arange(9.) + 1000.5).detach().requires_grad_()", (arange(9.) + 1000.5).detach().requires_grad_(),
       "tensor([1000.5000, 1001.5000, 1002.5000, 1003.5000, 1004.5000, 1005.5000,\n        1006.5000, 1007.5000, 1008.5000], requires_grad=True)"},
      {"tensor({1, 2}, kInt32)", tensor({1, 2}, kInt32),
       "tensor([1, 2], dtype=torch.int32)"},
      {"tensor({1.5, 2.}, kFloat64)", tensor({1.5, 2.}, kFloat64),
       "tensor([1.5000, 2.0000], dtype=torch.float64)"},
      {"tensor({0.1, 65504., 1.}, kFloat16)", tensor({0.1, 65504., 1.}, kFloat16),
       "tensor([9.9976e-02, 6.5504e+04, 1.0000e+00], dtype=torch.float16)"},
      {"tensor({0.1, 3.0}, kBFloat16)", tensor({0.1, 3.0}, kBFloat16),
       "tensor([0.1001, 3.0000], dtype=torch.bfloat16)"},
      {"tensor({true, false})", tensor({true, false}),
       "tensor([ True, False])"},
      {"tensor({{true}, {false}})", tensor({{true}, {false}}),
       "tensor([[ True],\n        [False]])"},
      {"tensor({200, 3}, kUInt8)", tensor({200, 3}, kUInt8),
       "tensor([200,   3], dtype=torch.uint8)"},
      {"tensor({-5, 3}, kInt8)", tensor({-5, 3}, kInt8),
       "tensor([-5,  3], dtype=torch.int8)"},
      {"tensor({7}, kInt16)", tensor({7}, kInt16),
       "tensor([7], dtype=torch.int16)"},
      {"ones({2}, kFloat64).requires_grad_()", ones({2}, kFloat64).requires_grad_(),
       "tensor([1., 1.], dtype=torch.float64, requires_grad=True)"},
      {"tensor(3.5)", tensor(3.5),
       "tensor(3.5000)"},
      {"tensor(7)", tensor(7),
       "tensor(7)"},
      {"tensor(true)", tensor(true),
       "tensor(True)"},
      {"tensor(2., kFloat64)", tensor(2., kFloat64),
       "tensor(2., dtype=torch.float64)"},
      {"tensor(1e-8)", tensor(1e-8),
       "tensor(1.0000e-08)"},
      {"tensor(-kInf)", tensor(-kInf),
       "tensor(-inf)"},
      {"zeros({0, 3})", zeros({0, 3}),
       "tensor([], size=(0, 3))"},
      {"zeros({0})", zeros({0}),
       "tensor([])"},
      {"zeros({0}, kLong)", zeros({0}, kLong),
       "tensor([], dtype=torch.int64)"},
      {"zeros({0}, kBool)", zeros({0}, kBool),
       "tensor([], dtype=torch.bool)"},
      {"zeros({2, 0, 3}, kInt32)", zeros({2, 0, 3}, kInt32),
       "tensor([], size=(2, 0, 3), dtype=torch.int32)"},
      {"zeros({0, 2}, requires_grad())", zeros({0, 2}, requires_grad()),
       "tensor([], size=(0, 2), requires_grad=True)"},
      {"arange(6.).view({2, 3}).t()", arange(6.).view({2, 3}).t(),
       "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])"},
      {"tensor({123456789, -1})", tensor({123456789, -1}),
       "tensor([123456789,        -1])"},
  });
}

TEST_CASE("test_print: float16 and bfloat16 match PyTorch 2.9.1's str()") {
  // The values print as their float value; the dtype suffix names the storage type.
  // Python twins: torch.tensor([...], dtype=torch.float16) etc.; str(t) printed by PyTorch.
  check_prints({
      {"tensor({kNaN, kInf, -kInf, 1.5}, kFloat16)", tensor({kNaN, kInf, -kInf, 1.5}, kFloat16),
       "tensor([   nan,    inf,   -inf, 1.5000], dtype=torch.float16)"},
      {"tensor({kNaN, -kInf, 2.25}, kBFloat16)", tensor({kNaN, -kInf, 2.25}, kBFloat16),
       "tensor([   nan,   -inf, 2.2500], dtype=torch.bfloat16)"},
      {"tensor({6e-8, 1.}, kFloat16)", tensor({6e-8, 1.}, kFloat16),
       "tensor([5.9605e-08, 1.0000e+00], dtype=torch.float16)"},
      {"tensor({1e-3, 1000.}, kFloat16)", tensor({1e-3, 1000.}, kFloat16),
       "tensor([1.0004e-03, 1.0000e+03], dtype=torch.float16)"},
      {"tensor({3e38, -1e-38, 1.}, kBFloat16)", tensor({3e38, -1e-38, 1.}, kBFloat16),
       "tensor([ 3.0041e+38, -1.0010e-38,  1.0000e+00], dtype=torch.bfloat16)"},
      {"tensor({1., 2., 3.}, kFloat16)", tensor({1., 2., 3.}, kFloat16),
       "tensor([1., 2., 3.], dtype=torch.float16)"},
      {"tensor({1., 257.}, kBFloat16)", tensor({1., 257.}, kBFloat16),
       "tensor([  1., 256.], dtype=torch.bfloat16)"},
      {"(arange(6.) / 3).view({2, 3}).to(kBFloat16)", (arange(6.) / 3).view({2, 3}).to(kBFloat16),
       "tensor([[0.0000, 0.3340, 0.6680],\n        [1.0000, 1.3359, 1.6641]], dtype=torch.bfloat16)"},
      {"(arange(6.) / 7).view({3, 2}).to(kFloat16)", (arange(6.) / 7).view({3, 2}).to(kFloat16),
       "tensor([[0.0000, 0.1428],\n        [0.2856, 0.4285],\n        [0.5713, 0.7144]], dtype=torch.float16)"},
      {"tensor(0.1, kFloat16)", tensor(0.1, kFloat16),
       "tensor(0.1000, dtype=torch.float16)"},
      {"tensor(-0.1, kBFloat16)", tensor(-0.1, kBFloat16),
       "tensor(-0.1001, dtype=torch.bfloat16)"},
      {"ones({2}, kBFloat16).requires_grad_()", ones({2}, kBFloat16).requires_grad_(),
       "tensor([1., 1.], dtype=torch.bfloat16, requires_grad=True)"},
      {"zeros({0}, kFloat16)", zeros({0}, kFloat16),
       "tensor([], dtype=torch.float16)"},
      {"(arange(2000.) / 3).to(kFloat16)", (arange(2000.) / 3).to(kFloat16),
       "tensor([0.0000e+00, 3.3325e-01, 6.6650e-01,  ..., 6.6550e+02, 6.6600e+02,\n        6.6650e+02], dtype=torch.float16)"},
      {"tensor({65504., -65504.}, kFloat16)", tensor({65504., -65504.}, kFloat16),
       "tensor([ 65504., -65504.], dtype=torch.float16)"},
  });
}

TEST_CASE("test_print: suffixes wrap at 80 columns") {
  // torch: str((torch.arange(6.) + 1000.5).requires_grad_()) and the same in float64.
  Tensor a = (arange(6.) + 1000.5).requires_grad_();
  CHECK(a.toString() ==
        "tensor([1000.5000, 1001.5000, 1002.5000, 1003.5000, 1004.5000, 1005.5000],\n"
        "       requires_grad=True)");
  Tensor b = (arange(6., kDouble) + 1000.5).requires_grad_();
  CHECK(b.toString() ==
        "tensor([1000.5000, 1001.5000, 1002.5000, 1003.5000, 1004.5000, 1005.5000],\n"
        "       dtype=torch.float64, requires_grad=True)");
  Tensor leaf = tensor({1., 2.}, TensorOptions().dtype(kDouble).requires_grad(true));
  CHECK((leaf * 2.0).toString() == "tensor([2., 4.], dtype=torch.float64, grad_fn=<MulBackward0>)");
  CHECK(arange(10., kDouble).view({2, 5}).toString() ==
        "tensor([[0., 1., 2., 3., 4.],\n        [5., 6., 7., 8., 9.]], dtype=torch.float64)");
}

TEST_CASE("test_print: default dtype decides the dtype suffix") {
  // torch.set_default_dtype(torch.float64); str(torch.tensor([1.5, 2.])), ...
  set_default_dtype(kDouble);
  CHECK(tensor({1.5, 2.}).toString() == "tensor([1.5000, 2.0000])");
  CHECK(tensor({1.5, 2.}, kFloat).toString() == "tensor([1.5000, 2.0000], dtype=torch.float32)");
  CHECK(zeros({0}, kFloat).toString() == "tensor([], dtype=torch.float32)");
  CHECK(zeros({0}).toString() == "tensor([])");
  set_default_dtype(kFloat);
}

TEST_CASE("test_print: operator<< and undefined tensors") {
  std::ostringstream s;
  s << arange(3);
  CHECK(s.str() == "tensor([0, 1, 2])");
  std::ostringstream u;
  u << Tensor();
  CHECK(u.str() == "[ Tensor (undefined) ]");
  // Printing a tensor that requires grad records nothing and leaves it unchanged.
  Tensor x = ones({2}, requires_grad());
  uint32_t v = x._version();
  (void)x.toString();
  CHECK(x._version() == v);
  CHECK(x.is_leaf());
}
