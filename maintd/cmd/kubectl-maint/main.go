package main

import (
	_ "embed"
	"os"

	"github.com/sentinel-go/sentinel/plumbing/command"
)

//go:embed doc.go
var doc string

const name = "kubectl-maint"

func main() { os.Exit(command.Main(app())) }
