// The sanitizer canary: one deliberate fault per sanitizer, picked by argv[1], so a test can
// prove that the sanitized build really catches what it claims to (a build that silently lost
// its -fsanitize flags would pass every other test). Each mode prints "canary survived" if the
// fault went unnoticed; the ctest entries (CMakeLists.txt here) require the sanitizer's report.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

// Reads one int past the end of a heap block (AddressSanitizer: heap-buffer-overflow).
int heap_overflow(int n) {
  int* p = new int[n];
  for (int i = 0; i < n; ++i) p[i] = i;
  volatile int past = p[n];
  delete[] p;
  return past;
}

// INT_MAX + n for a run-time n > 0 (UndefinedBehaviorSanitizer: signed integer overflow).
int signed_overflow(int n) {
  volatile int big = 2147483647;
  return big + n;
}

// Two threads increment one plain int with no synchronisation (ThreadSanitizer: data race).
int data_race(int n) {
  static int counter = 0;
  std::thread t([n] {
    for (int i = 0; i < n; ++i) ++counter;
  });
  for (int i = 0; i < n; ++i) ++counter;
  t.join();
  return counter;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s heap-overflow|signed-overflow|data-race\n", argv[0]);
    return 2;
  }
  int n = argc + 2;  // not a compile-time constant, so nothing is folded away
  int r = 0;
  if (std::strcmp(argv[1], "heap-overflow") == 0) r = heap_overflow(n);
  else if (std::strcmp(argv[1], "signed-overflow") == 0) r = signed_overflow(n);
  else if (std::strcmp(argv[1], "data-race") == 0) r = data_race(1000 * n);
  else return 2;
  std::printf("canary survived (%d)\n", r);
  return 0;
}
