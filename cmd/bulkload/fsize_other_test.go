//go:build !unix

package main

import "errors"

func limitFileSize(uint64) error { return errors.New("no file size limit on this system") }
