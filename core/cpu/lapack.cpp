#include "ember/core/cpu/lapack.h"

#include <cstddef>
#include <vector>

// The Fortran routines' C ABI (gfortran's): every argument by pointer, and one hidden length
// per character argument after the others. Declared here because Debian's liblapack-dev ships
// no C header (lapacke is a separate package ember does not need).
extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, size_t trans_len);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t trans_len);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work, const int* lwork, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t uplo_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t jobz_len, size_t uplo_len);
}

namespace ember::cpu::lapack {

namespace {
// max(1, n): LAPACK's leading dimensions must be at least 1, even for an empty matrix.
int ld(int n) { return n > 0 ? n : 1; }
}  // namespace

template <>
int getrf<float>(int n, float* a, int* ipiv) {
  int info = 0, lda = ld(n);
  sgetrf_(&n, &n, a, &lda, ipiv, &info);
  return info;
}
template <>
int getrf<double>(int n, double* a, int* ipiv) {
  int info = 0, lda = ld(n);
  dgetrf_(&n, &n, a, &lda, ipiv, &info);
  return info;
}

template <>
int getrs<float>(char trans, int n, int nrhs, const float* lu, const int* ipiv, float* b) {
  int info = 0, lda = ld(n);
  sgetrs_(&trans, &n, &nrhs, lu, &lda, ipiv, b, &lda, &info, 1);
  return info;
}
template <>
int getrs<double>(char trans, int n, int nrhs, const double* lu, const int* ipiv, double* b) {
  int info = 0, lda = ld(n);
  dgetrs_(&trans, &n, &nrhs, lu, &lda, ipiv, b, &lda, &info, 1);
  return info;
}

template <>
int getri<float>(int n, float* lu, const int* ipiv) {
  int info = 0, lda = ld(n), query = -1;
  float size = 0;
  sgetri_(&n, lu, &lda, ipiv, &size, &query, &info);
  int lwork = static_cast<int>(size) > 1 ? static_cast<int>(size) : 1;
  std::vector<float> work(static_cast<size_t>(lwork));
  sgetri_(&n, lu, &lda, ipiv, work.data(), &lwork, &info);
  return info;
}
template <>
int getri<double>(int n, double* lu, const int* ipiv) {
  int info = 0, lda = ld(n), query = -1;
  double size = 0;
  dgetri_(&n, lu, &lda, ipiv, &size, &query, &info);
  int lwork = static_cast<int>(size) > 1 ? static_cast<int>(size) : 1;
  std::vector<double> work(static_cast<size_t>(lwork));
  dgetri_(&n, lu, &lda, ipiv, work.data(), &lwork, &info);
  return info;
}

template <>
int potrf<float>(char uplo, int n, float* a) {
  int info = 0, lda = ld(n);
  spotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}
template <>
int potrf<double>(char uplo, int n, double* a) {
  int info = 0, lda = ld(n);
  dpotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}

template <>
int syevd<float>(char jobz, char uplo, int n, float* a, float* w) {
  int info = 0, lda = ld(n), query = -1, isize = 0;
  float size = 0;
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, &size, &query, &isize, &query, &info, 1, 1);
  int lwork = static_cast<int>(size) > 1 ? static_cast<int>(size) : 1, liwork = isize > 1 ? isize : 1;
  std::vector<float> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  return info;
}
template <>
int syevd<double>(char jobz, char uplo, int n, double* a, double* w) {
  int info = 0, lda = ld(n), query = -1, isize = 0;
  double size = 0;
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, &size, &query, &isize, &query, &info, 1, 1);
  int lwork = static_cast<int>(size) > 1 ? static_cast<int>(size) : 1, liwork = isize > 1 ? isize : 1;
  std::vector<double> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  return info;
}

}  // namespace ember::cpu::lapack
