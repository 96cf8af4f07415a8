module hivenode/bench/go-template

go 1.19
