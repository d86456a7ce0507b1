// Package repocheck holds tests over the repository as a whole: every
// reference to a file, in the Markdown documents and in the Go comments,
// names a file the repository has.
package repocheck
