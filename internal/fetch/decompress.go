package fetch

import (
	"bytes"
	"errors"
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
	gzipReaders  sync.Pool
	lz4Readers   = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	zstdDecoders sync.Map // by the limit they hold
)

// errTooLarge stands for sarama.ErrDecompressedBatchTooLarge until
// decompress words it.
var errTooLarge = errors.New("too large")

// decompress returns a batch's records decompressed with codec (the
// attributes' low three bits); uncompressed ones are data itself. It
// holds sarama.MaxDecompressedBatchSize (0: no limit) as sarama does,
// stopping before the output grows past it.
func decompress(codec int8, data []byte) ([]byte, error) {
	limit := int(sarama.MaxDecompressedBatchSize)
	var out []byte
	var err error
	switch cc := sarama.CompressionCodec(codec); cc {
	case sarama.CompressionNone:
		return data, nil
	case sarama.CompressionGZIP:
		out, err = gunzip(data, limit)
	case sarama.CompressionSnappy:
		out, err = unsnappy(data, limit)
	case sarama.CompressionLZ4:
		r := lz4Readers.Get().(*lz4.Reader)
		r.Reset(bytes.NewReader(data))
		out, err = readAll(r, len(data), limit)
		lz4Readers.Put(r)
	case sarama.CompressionZSTD:
		var d *zstd.Decoder
		if d, err = zstdDecoder(limit); err == nil {
			out, err = d.DecodeAll(data, nil)
			if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
				err = errTooLarge
			}
		}
	default:
		return nil, fmt.Errorf("%w: compression codec %d", errMalformedRecords, codec)
	}
	switch {
	case errors.Is(err, errTooLarge):
		return nil, fmt.Errorf("%w: %s batch decompressed to more than %d bytes", sarama.ErrDecompressedBatchTooLarge,
			sarama.CompressionCodec(codec), limit)
	case err != nil:
		return nil, fmt.Errorf("%w: %s: %w", errMalformedRecords, sarama.CompressionCodec(codec), err)
	}
	return out, nil
}

// zstdDecoder returns the shared zstd decoder holding limit (0: none), as
// sarama configures its own.
func zstdDecoder(limit int) (*zstd.Decoder, error) {
	if d, ok := zstdDecoders.Load(limit); ok {
		return d.(*zstd.Decoder), nil
	}
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(0)}
	if limit > 0 {
		opts = append(opts, zstd.WithDecoderMaxMemory(uint64(limit)))
	}
	d, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return nil, err
	}
	if kept, loaded := zstdDecoders.LoadOrStore(limit, d); loaded {
		d.Close()
		return kept.(*zstd.Decoder), nil
	}
	return d, nil
}

// gunzip decompresses a gzip batch with a pooled reader.
func gunzip(data []byte, limit int) ([]byte, error) {
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
	out, err := readAll(r, len(data), limit)
	gzipReaders.Put(r)
	return out, err
}

// unsnappy decompresses a (xerial-framed) snappy batch, into a buffer
// grown up to limit (0: none).
func unsnappy(data []byte, limit int) ([]byte, error) {
	if limit <= 0 {
		return snappy.Decode(data)
	}
	for size := min(4*len(data)+512, limit); ; size = min(2*size, limit) {
		out, err := snappy.DecodeCapped(make([]byte, 0, size), data)
		if !errors.Is(err, snappy.ErrDstTooSmall) {
			return out, err
		}
		if size == limit {
			return nil, errTooLarge
		}
	}
}

// readAll reads r to its end into a buffer sized for a few times the
// compressed size, reading at most limit bytes (0: no limit).
func readAll(r io.Reader, compressed, limit int) ([]byte, error) {
	if limit > 0 {
		r = io.LimitReader(r, int64(limit)+1)
	}
	buf := bytes.NewBuffer(make([]byte, 0, 4*compressed+512))
	_, err := buf.ReadFrom(r)
	if limit > 0 && buf.Len() > limit {
		return nil, errTooLarge
	}
	return buf.Bytes(), err
}
