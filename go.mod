module github.com/litequeue/litequeue

go 1.26.0

require github.com/benbjohnson/clock v1.3.5
