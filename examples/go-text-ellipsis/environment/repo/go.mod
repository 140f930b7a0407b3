module example.com/ellipsis

go 1.19
