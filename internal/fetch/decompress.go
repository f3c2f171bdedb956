package fetch

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/IBM/sarama"
	"github.com/klauspost/compress/gzip"
	snappy "github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The codecs are sarama's own packages, used as sarama uses them, so a
// batch sarama decompresses decompresses the same here. Unlike sarama's,
// the output is not copied once more: messages alias it.

var (
	gzipReaders sync.Pool
	lz4Readers  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	zstdOnce    sync.Once
	zstdDec     *zstd.Decoder
	zstdErr     error
)

// decompress returns a batch's records decompressed with codec (the
// attributes' low three bits); uncompressed ones are data itself. It
// holds sarama.MaxDecompressedBatchSize (0: no limit) as sarama does.
func decompress(codec int8, data []byte) ([]byte, error) {
	var out []byte
	var err error
	switch sarama.CompressionCodec(codec) {
	case sarama.CompressionNone:
		return data, nil
	case sarama.CompressionGZIP:
		out, err = gunzip(data)
	case sarama.CompressionSnappy:
		out, err = snappy.Decode(data)
	case sarama.CompressionLZ4:
		r := lz4Readers.Get().(*lz4.Reader)
		r.Reset(bytes.NewReader(data))
		out, err = readAll(r, len(data))
		lz4Readers.Put(r)
	case sarama.CompressionZSTD:
		zstdOnce.Do(func() { zstdDec, zstdErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0)) })
		if zstdErr != nil {
			return nil, zstdErr
		}
		out, err = zstdDec.DecodeAll(data, nil)
	default:
		return nil, fmt.Errorf("%w: compression codec %d", errMalformedRecords, codec)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errMalformedRecords, sarama.CompressionCodec(codec), err)
	}
	if limit := int(sarama.MaxDecompressedBatchSize); limit > 0 && len(out) > limit {
		return nil, fmt.Errorf("%w: %s batch decompressed to more than %d bytes", sarama.ErrDecompressedBatchTooLarge,
			sarama.CompressionCodec(codec), limit)
	}
	return out, nil
}

// gunzip decompresses a gzip batch with a pooled reader.
func gunzip(data []byte) ([]byte, error) {
	var err error
	r, ok := gzipReaders.Get().(*gzip.Reader)
	if ok {
		err = r.Reset(bytes.NewReader(data))
	} else {
		r, err = gzip.NewReader(bytes.NewReader(data))
	}
	if err != nil {
		return nil, err
	}
	out, err := readAll(r, len(data))
	gzipReaders.Put(r)
	return out, err
}

// readAll reads r to its end into a buffer sized for a few times the
// compressed size.
func readAll(r io.Reader, compressed int) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, 4*compressed+512))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}
