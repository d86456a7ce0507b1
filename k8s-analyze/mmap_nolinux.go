//go:build unix && !linux

package main

const mapPopulate = 0
