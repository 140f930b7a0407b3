// The ctest runner's fixture project (test/runners/ctest.test.ts, ctest-canary.test.ts): a CMake
// build of a calculator library with GoogleTest executables and a CTest script test, and its
// sources before and after the gold fix.

export const CMAKE = `cmake_minimum_required(VERSION 3.16)
project(calc CXX)
find_package(GTest REQUIRED)
enable_testing()
add_library(calc src/calc.cc)
target_include_directories(calc PUBLIC include)
foreach(name calc-test div-test)
  add_executable(\${name} test/\${name}.cc)
  target_link_libraries(\${name} calc GTest::gtest GTest::gtest_main)
  add_test(NAME \${name} COMMAND \${name})
endforeach()
add_test(NAME shell-check COMMAND sh \${CMAKE_SOURCE_DIR}/test/check.sh)
`;

export const CALC = `#include "calc.h"
int add(int a, int b) { return a + b; }
int divide(int a, int b) { return a / b; }
`;

export const GOLD_CALC = `#include "calc.h"
int add(int a, int b) { return a + b; }
int divide(int a, int b) {
  if (b == 0) return 0;
  int q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) q--;
  return q;
}
`;
