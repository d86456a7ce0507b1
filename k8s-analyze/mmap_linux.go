package main

import "syscall"

const mapPopulate = syscall.MAP_POPULATE
