module hivenode/template-oracle

go 1.19
