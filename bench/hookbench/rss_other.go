//go:build !unix

package main

import "os"

func maxRSS(*os.ProcessState) int64 { return 0 }

func minFaults(*os.ProcessState) int64 { return 0 }
