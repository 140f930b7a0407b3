autoreconf -i && ./configure --with-oniguruma=builtin && make -j2
