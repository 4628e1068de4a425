// Package ingest serves the ingestion endpoint, {base}/api/v1/beet/{token}:
// the whole public interface of the original document and Beet's hot path.
// It always answers with a transparent GIF (200, or 429 past the rate
// limit), records events durably before answering, and notes problems on
// the beet instead of in the response.
package ingest

// transparentGIF is the standard 43-byte GIF89a: 1x1, one transparent pixel.
var transparentGIF = []byte{
	'G', 'I', 'F', '8', '9', 'a', // header
	0x01, 0x00, 0x01, 0x00, // 1x1
	0x80, 0x00, 0x00, // global colour table of 2 entries
	0x00, 0x00, 0x00, 0xff, 0xff, 0xff, // black, white
	0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, // graphic control: colour 0 transparent
	0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, // image descriptor
	0x02, 0x02, 0x44, 0x01, 0x00, // LZW data
	0x3b, // trailer
}
