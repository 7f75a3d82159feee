// LAPACK for one column-major matrix at a time (Debian's liblapack, the reference
// implementation, or any ABI-compatible replacement such as OpenBLAS's): the factorizations
// torch.linalg's CPU functions use. Each returns LAPACK's `info` (0: success; > 0: the
// routine's numerical failure, e.g. a zero pivot; < 0 cannot happen for the arguments these
// wrappers pass). Workspaces are queried and allocated here.
#pragma once

#include <cstdint>

namespace ember::cpu::lapack {

/// LU with partial pivoting of the n x n matrix a (in place; ipiv: n 1-based pivots).
template <class T>
int getrf(int n, T* a, int* ipiv);
/// Solves A X = B (trans 'N') or A^T X = B (trans 'T') for nrhs columns of b, given getrf's
/// factors of A.
template <class T>
int getrs(char trans, int n, int nrhs, const T* lu, const int* ipiv, T* b);
/// Inverse from getrf's factors, in place.
template <class T>
int getri(int n, T* lu, const int* ipiv);
/// Cholesky factor of the symmetric positive-definite a, in place, in triangle uplo ('L'/'U').
template <class T>
int potrf(char uplo, int n, T* a);
/// Eigenvalues (ascending, into w) and, with jobz 'V', orthonormal eigenvectors (into a's
/// columns) of the symmetric a, read from triangle uplo; divide and conquer (syevd).
template <class T>
int syevd(char jobz, char uplo, int n, T* a, T* w);

}  // namespace ember::cpu::lapack
