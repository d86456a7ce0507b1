module github.com/sentinel-go/sentinel/meminfo-exporter

go 1.26.0

require github.com/google/go-cmp v0.7.0

replace github.com/sentinel-go/sentinel/plumbing => ../plumbing
