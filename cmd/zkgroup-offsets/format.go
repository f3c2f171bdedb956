package main

import (
	"encoding/json"
	"fmt"
	"io"
)

// offsetsFileVersion is the version of the export format this program
// writes and reads.
const offsetsFileVersion = 1

// OffsetsFile is the JSON document export writes and import reads:
//
//	{
//	  "version": 1,
//	  "group": "my-group",
//	  "exported_at": "2024-05-01T10:00:00Z",
//	  "offsets": {
//	    "my-topic": {"0": 1200, "1": 1187}
//	  }
//	}
//
// offsets maps topic, then partition (a decimal string, as JSON object keys
// are strings), to the committed offset: the next offset the group will
// consume, as stored in ZooKeeper. exported_at is informative.
type OffsetsFile struct {
	Version    int                        `json:"version"`
	Group      string                     `json:"group"`
	ExportedAt string                     `json:"exported_at,omitempty"`
	Offsets    map[string]map[int32]int64 `json:"offsets"`
}

// readOffsetsFile decodes and checks an export.
func readOffsetsFile(r io.Reader) (*OffsetsFile, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f OffsetsFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not an offsets export: %w", err)
	}
	if f.Version != offsetsFileVersion {
		return nil, fmt.Errorf("offsets export version %d; this program reads version %d", f.Version, offsetsFileVersion)
	}
	if len(f.Offsets) == 0 {
		return nil, fmt.Errorf("offsets export of group %q holds no offsets", f.Group)
	}
	for topic, parts := range f.Offsets {
		for p, off := range parts {
			if p < 0 || off < 0 {
				return nil, fmt.Errorf("offsets export: %s/%d: partition and offset must be >= 0, got offset %d", topic, p, off)
			}
		}
	}
	return &f, nil
}
