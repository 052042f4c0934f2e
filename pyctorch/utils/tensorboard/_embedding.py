"""Files of the projector plugin for add_embedding: <logdir>/<step:05d>/<tag>/ holds tensors.tsv (one point
a line), metadata.tsv (labels) and sprite.png (thumbnails); <logdir>/projector_config.pbtxt lists them all."""
import io
import math

import numpy as np
from tensorboard.compat import tf
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

from ._image import grid_of_images


def _write(path, data):
    # tf.io.gfile: the same file layer the event writer uses, so remote log dirs work alike
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)


def encode_tag(tag):
    """The tag as one directory name: %, / and \\ become %xx."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def write_matrix(mat, folder):
    lines = ["\t".join(str(x.item()) for x in row) for row in mat]
    _write(folder + "/tensors.tsv", ("\n".join(lines) + "\n" if lines else "").encode())


def write_metadata(metadata, folder, header=None):
    if header:
        if len(header) != len(metadata[0]):
            raise AssertionError("metadata_header must have one name per metadata column")
        rows = ["\t".join(str(x) for x in row) for row in [header] + list(metadata)]
    else:
        rows = [str(x) for x in metadata]
    _write(folder + "/metadata.tsv", ("\n".join(rows) + "\n").encode())


def write_sprite(label_img, folder):
    """All thumbnails (N x C x H x W in [0, 1]) on one square sheet, sqrt(N) a row."""
    from PIL import Image
    per_row = math.ceil(label_img.shape[0] ** 0.5)
    sheet = grid_of_images(label_img, ncols=per_row).transpose(1, 2, 0)
    side = sheet.shape[1]
    square = np.zeros((side, side, 3))
    square[:sheet.shape[0]] = sheet
    buffer = io.BytesIO()
    Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(buffer, format="PNG")
    _write(folder + "/sprite.png", buffer.getvalue())


def embedding_info(tag, step, subdir, has_metadata, label_img):
    info = EmbeddingInfo(tensor_name=f"{tag}:{step:05d}", tensor_path=subdir + "/tensors.tsv")
    if has_metadata:
        info.metadata_path = subdir + "/metadata.tsv"
    if label_img is not None:
        info.sprite.image_path = subdir + "/sprite.png"
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    return info
