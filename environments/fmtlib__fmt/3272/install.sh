cmake -B build -S . && cmake --build build --parallel 2 --target xchar-test
