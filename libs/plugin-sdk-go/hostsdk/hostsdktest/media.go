package hostsdktest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// Upload is media the plugin uploaded (media.upload, media.chunk, media.finish) and the test host kept, as
// the host keeps it: checked for its size, the order of its chunks and its declared type.
type Upload struct {
	MediaID     string
	ContentType string
	FileName    string
	Bytes       []byte
	// Chunks are the decoded sizes of its media.chunk calls, in order.
	Chunks []int
}

// uploadImageTypes and mediaSignatures are the host's checks by first bytes (libs/protocol/src/media-types.ts).
var uploadImageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

var mediaSignatures = map[string]func(head []byte) bool{
	"image/png":  func(h []byte) bool { return bytes.HasPrefix(h, []byte("\x89PNG\r\n\x1a\n")) },
	"image/jpeg": func(h []byte) bool { return bytes.HasPrefix(h, []byte{0xff, 0xd8, 0xff}) },
	"image/gif": func(h []byte) bool {
		return bytes.HasPrefix(h, []byte("GIF87a")) || bytes.HasPrefix(h, []byte("GIF89a"))
	},
	"image/webp":      func(h []byte) bool { return len(h) >= 12 && string(h[:4]) == "RIFF" && string(h[8:12]) == "WEBP" },
	"application/pdf": func(h []byte) bool { return bytes.HasPrefix(h, []byte("%PDF-")) },
}

// mediaTypeProblem says why the host refuses contentType for bytes starting with head ("" when it takes it).
func mediaTypeProblem(contentType string, head []byte) string {
	if strings.HasPrefix(contentType, "image/") && !contains(uploadImageTypes, contentType) {
		return fmt.Sprintf("the host takes images as %s, not %s; convert the image, or upload it as a file", strings.Join(uploadImageTypes, ", "), contentType)
	}
	if check, ok := mediaSignatures[contentType]; ok && head != nil && !check(head) {
		return fmt.Sprintf("the upload declares %s, but its bytes do not start with the %s signature; declare the type the bytes have", contentType, contentType)
	}
	return ""
}

var contentTypePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$`)

// upload is an upload under way.
type upload struct {
	Upload
	size int64
}

// mediaStore holds the uploads under way and the finished media of one test host.
type mediaStore struct {
	open     map[string]*upload
	finished map[string]*Upload
	order    []string
	next     int
}

func (h *Host) rejectMedia(m *frame, code, message string) {
	h.respondError(m.ID, wire.RPCMessageRejected, message, map[string]any{"code": code})
}

// answerMedia answers media.upload, media.chunk and media.finish as the host does (docs/protocol/v2.md
// 4.12): the declared size, chunks in order at the offset received so far and at most MaxChunkBytes, the
// first bytes against the declared type on finish; a refused chunk or finish drops the upload.
func (h *Host) answerMedia(m *frame) {
	if !h.permitted(wire.PermissionMediaUpload) {
		h.respondError(m.ID, wire.RPCPermissionDenied, wire.PermissionMediaUpload+" is not declared",
			map[string]any{"code": wire.CodeMessagePermissionDenied, "permission": wire.PermissionMediaUpload})
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.media.open == nil {
		h.media.open, h.media.finished = map[string]*upload{}, map[string]*Upload{}
	}
	switch m.Method {
	case wire.MethodMediaUpload:
		var p wire.MediaUploadParams
		if err := json.Unmarshal(m.Params, &p); err != nil || !contentTypePattern.MatchString(p.ContentType) || len(p.ContentType) > 127 || p.Size < 1 ||
			(strings.Contains(string(m.Params), `"fileName"`) && (p.FileName == "" || len([]rune(p.FileName)) > 255)) {
			h.respondError(m.ID, wire.RPCInvalidParams, "media.upload params are invalid: contentType must be a lowercase type/subtype, size at least 1, fileName 1 to 255 characters", nil)
			return
		}
		if p.Size > wire.LimitMaxMediaUploadBytes {
			h.rejectMedia(m, wire.CodeMessageMediaTooLarge, fmt.Sprintf("the upload declares %d bytes; the host takes at most %d", p.Size, wire.LimitMaxMediaUploadBytes))
			return
		}
		if problem := mediaTypeProblem(p.ContentType, nil); problem != "" {
			h.rejectMedia(m, wire.CodeMessageMediaTypeMismatch, problem)
			return
		}
		h.media.next++
		id := fmt.Sprintf("test-upload-%06d", h.media.next)
		h.media.open[id] = &upload{Upload: Upload{ContentType: p.ContentType, FileName: p.FileName}, size: p.Size}
		h.respond(m.ID, wire.MediaUploadResult{UploadID: id, MaxChunkBytes: h.maxChunkBytes()})
	case wire.MethodMediaChunk:
		var p wire.MediaChunkParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			h.respondError(m.ID, wire.RPCInvalidParams, "media.chunk params are invalid: "+err.Error(), nil)
			return
		}
		u := h.media.open[p.UploadID]
		if u == nil {
			h.rejectMedia(m, wire.CodeMessageMediaUnknown, fmt.Sprintf("the upload %q is not known (never begun, finished or dropped)", p.UploadID))
			return
		}
		data, err := base64.StdEncoding.DecodeString(p.Data)
		var code, problem string
		switch {
		case err != nil:
			code, problem = wire.CodeMessageMediaUploadInvalid, "data is not base64 with padding"
		case p.Offset != int64(len(u.Bytes)):
			code, problem = wire.CodeMessageMediaUploadInvalid, fmt.Sprintf("the chunk starts at offset %d; the host has %d bytes of the upload", p.Offset, len(u.Bytes))
		case int64(len(data)) > h.maxChunkBytes():
			code, problem = wire.CodeMessageMediaTooLarge, fmt.Sprintf("the chunk has %d bytes; at most %d are allowed", len(data), h.maxChunkBytes())
		case int64(len(u.Bytes)+len(data)) > u.size:
			code, problem = wire.CodeMessageMediaTooLarge, fmt.Sprintf("the chunks pass the declared size of %d bytes", u.size)
		}
		if code != "" {
			delete(h.media.open, p.UploadID)
			h.rejectMedia(m, code, problem)
			return
		}
		u.Bytes = append(u.Bytes, data...)
		u.Chunks = append(u.Chunks, len(data))
		h.respond(m.ID, wire.MediaChunkResult{Received: int64(len(u.Bytes))})
	case wire.MethodMediaFinish:
		var p wire.MediaFinishParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			h.respondError(m.ID, wire.RPCInvalidParams, "media.finish params are invalid: "+err.Error(), nil)
			return
		}
		u := h.media.open[p.UploadID]
		if u == nil {
			h.rejectMedia(m, wire.CodeMessageMediaUnknown, fmt.Sprintf("the upload %q is not known (never begun, finished or dropped)", p.UploadID))
			return
		}
		delete(h.media.open, p.UploadID)
		if int64(len(u.Bytes)) != u.size {
			h.rejectMedia(m, wire.CodeMessageMediaUploadInvalid, fmt.Sprintf("media.finish came after %d of the %d declared bytes", len(u.Bytes), u.size))
			return
		}
		if problem := mediaTypeProblem(u.ContentType, u.Bytes[:min(len(u.Bytes), 16)]); problem != "" {
			h.rejectMedia(m, wire.CodeMessageMediaTypeMismatch, problem)
			return
		}
		u.MediaID = fmt.Sprintf("test-media-%06d", len(h.media.order)+1)
		kept := u.Upload
		h.media.finished[kept.MediaID] = &kept
		h.media.order = append(h.media.order, kept.MediaID)
		expires := time.Now().Add(wire.LimitMediaTtlMilliseconds * time.Millisecond).UTC().Format(time.RFC3339Nano)
		h.respond(m.ID, wire.MediaFinishResult{MediaID: kept.MediaID, ContentType: kept.ContentType, Size: u.size, ExpiresAt: expires})
	}
}

func (h *Host) maxChunkBytes() int64 {
	if h.opts.MaxChunkBytes > 0 {
		return h.opts.MaxChunkBytes
	}
	return wire.LimitMaxMediaChunkBytes
}

// mediaProblem checks the media ids a message names as the host does before sending it: each one this
// plugin uploaded, and an image part's of an image type. It returns the message.* code and why, or "".
func (h *Host) mediaProblem(parts wire.MessagePartList) (string, string) {
	for i, part := range parts {
		id, image := "", false
		switch v := part.(type) {
		case wire.MessagePartImage:
			id, image = v.MediaID, true
		case wire.MessagePartFile:
			id = v.MediaID
		}
		if id == "" {
			continue
		}
		kept := h.media.finished[id]
		if kept == nil {
			return wire.CodeMessageMediaUnknown, fmt.Sprintf("parts[%d] names the media id %q, which this plugin did not upload (or it expired)", i, id)
		}
		if image && !strings.HasPrefix(kept.ContentType, "image/") {
			return wire.CodeMessageMediaTypeMismatch, fmt.Sprintf("parts[%d] is an image of media uploaded as %s", i, kept.ContentType)
		}
	}
	return "", ""
}

// Uploads are the media the plugin uploaded and finished so far, in order.
func (h *Host) Uploads() []Upload {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Upload, 0, len(h.media.order))
	for _, id := range h.media.order {
		out = append(out, *h.media.finished[id])
	}
	return out
}

// Upload is the media the plugin uploaded as mediaID, or nil.
func (h *Host) Upload(mediaID string) *Upload {
	h.mu.Lock()
	defer h.mu.Unlock()
	if kept := h.media.finished[mediaID]; kept != nil {
		out := *kept
		return &out
	}
	return nil
}
