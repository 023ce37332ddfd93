// The converter page: sends the form to the same operations as the API (/app/v1/<operation>,
// signed in by the session cookie plus the page's CSRF token) and shows the result or the
// API's own error message; "Several steps" sends crop, resize, rotate and flip steps in one
// request (/app/v1/transform). No framework: the page works without a build step.
const form = document.getElementById('converter');
const fileInput = form.elements.file;
const operationSelect = form.elements.operation;
const formatSelect = form.elements.format;
const qualityInput = form.elements.quality;
const qualityAuto = form.elements.quality_auto;
const qualityTarget = form.elements.quality_target;
const dropZone = document.getElementById('drop-zone');
const progress = document.getElementById('progress');
const progressBar = progress.querySelector('progress');
const progressText = progress.querySelector('.progress-text');
const errorBox = document.getElementById('error');
const result = document.getElementById('result');
const submitButton = form.querySelector('button[type="submit"]');
const csrfToken = document.querySelector('meta[name="csrf-token"]').content;
const maxBytes = Number(form.dataset.maxBytes);
const maxMegabytes = Number(form.dataset.maxMb);
const limitMessage = form.dataset.limitMessage;
const quotaExhausted = document.getElementById('quota-exhausted');
/** Conversions left today; null when the plan has no daily limit. */
let remaining = form.dataset.remaining === '' ? null : Number(form.dataset.remaining);

const chosen = document.getElementById('chosen');
const imageFacts = document.getElementById('image-facts');
const preview = document.getElementById('preview');
const previewImage = document.getElementById('preview-image');
const cropBox = document.getElementById('crop-box');
const cropHint = document.getElementById('crop-hint');
const cropFields = { x: document.getElementById('crop-x'), y: document.getElementById('crop-y'), width: document.getElementById('crop-width'), height: document.getElementById('crop-height') };
const fitSelect = form.elements.fit;
const positionSelect = form.elements.position;
const keepAspectRatio = form.elements.keep_aspect_ratio;
const resizeFields = { width: document.getElementById('resize-width'), height: document.getElementById('resize-height') };
const fitHint = document.getElementById('kept-hint');
/** Where each compass position puts the kept part: 0 left/top, 1 right/bottom. */
const GRAVITY = { center: [0.5, 0.5], north: [0.5, 0], northeast: [1, 0], east: [1, 0.5], southeast: [1, 1], south: [0.5, 1], southwest: [0, 1], west: [0, 0.5], northwest: [0, 0] };

const OPERATIONS = {
  convert: { button: 'Convert', busy: 'Converting…', format: 'webp' },
  crop: { button: 'Crop', busy: 'Cropping…', format: '' },
  resize: { button: 'Resize', busy: 'Resizing…', format: '' },
  'remove-metadata': { button: 'Remove metadata', busy: 'Removing metadata…', format: '' },
  transform: { button: 'Apply steps', busy: 'Applying the steps…', format: '' },
};
let shownOperation = operationSelect.value;

/** The image as the browser shows it (EXIF orientation applied, as the API applies it). */
let image = null;

const groupedDigits = (value) => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const tooLargeMessage = () => `The file is larger than the ${maxMegabytes} MB (${groupedDigits(maxBytes)} bytes) your plan allows.`;

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function showError(message, requestId) {
  errorBox.textContent = message;
  if (requestId) {
    const reference = document.createElement('small');
    reference.className = 'request-id';
    reference.textContent = ` (request ${requestId})`;
    errorBox.append(reference);
  }
  errorBox.hidden = false;
}

function showOperationFields() {
  const operation = operationSelect.value;
  // The format follows the operation's default unless someone chose another one.
  if (formatSelect.value === OPERATIONS[shownOperation].format) formatSelect.value = OPERATIONS[operation].format;
  shownOperation = operation;
  for (const fieldset of form.querySelectorAll('fieldset[data-operation]')) {
    const active = fieldset.dataset.operation === operation;
    fieldset.hidden = !active;
    // Disabled fields stay out of the upload: crop and resize both have width and height.
    fieldset.disabled = !active;
  }
  formatSelect.required = operation === 'convert';
  formatSelect.options[0].disabled = operation === 'convert';
  if (operation === 'convert' && formatSelect.value === '') formatSelect.value = 'webp';
  submitButton.textContent = OPERATIONS[operation].button;
  if (operation === 'crop' && image && cropFields.width.value === '' && cropFields.height.value === '') setCropRegion({ x: 0, y: 0, width: image.width, height: image.height });
  showFitFields();
  showQualityFields();
  showStepSizes();
}

/** Auto quality takes a target instead of a number; format=best always chooses its quality itself. */
function showQualityFields() {
  const best = formatSelect.value === 'best';
  if (best) qualityAuto.checked = true;
  qualityAuto.disabled = best;
  qualityInput.disabled = qualityAuto.checked;
  qualityTarget.disabled = !qualityAuto.checked;
}

/** Position only where it means something (cover, contain; contain places by a side only); the checkbox only without a fit. */
function showFitFields() {
  const fit = fitSelect.value;
  keepAspectRatio.disabled = fit !== '';
  positionSelect.disabled = fit !== 'cover' && fit !== 'contain';
  for (const option of positionSelect.options) option.disabled = fit === 'contain' && !(option.value in GRAVITY);
  if (positionSelect.selectedOptions[0]?.disabled) positionSelect.value = 'center';
  drawCropBox();
}

// ---------------------------------------------------------------------------
// The chosen image: facts, preview, crop region
// ---------------------------------------------------------------------------

/** The format by the file's first bytes, as the API tells it (never by the name). */
async function sniffFormat(file) {
  const head = new Uint8Array(await file.slice(0, 16).arrayBuffer());
  const text = (from, to) => String.fromCharCode(...head.subarray(from, to));
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'JPEG';
  if (head[0] === 0x89 && text(1, 4) === 'PNG') return 'PNG';
  if (text(0, 4) === 'RIFF' && text(8, 12) === 'WEBP') return 'WebP';
  if (text(4, 8) === 'ftyp' && ['avif', 'avis'].includes(text(8, 12))) return 'AVIF';
  return null;
}

async function showChosenImage() {
  const file = fileInput.files[0];
  errorBox.hidden = true;
  image = null;
  if (previewImage.src) URL.revokeObjectURL(previewImage.src);
  previewImage.removeAttribute('src');
  if (!file) {
    chosen.hidden = true;
    return;
  }
  chosen.hidden = false;
  const format = await sniffFormat(file);
  const size = formatBytes(file.size);
  imageFacts.textContent = format ? `${file.name}: ${format}, ${size}` : `${file.name}: ${size}, not a JPEG, PNG, WebP or AVIF file`;
  if (file.size > maxBytes) showError(tooLargeMessage());
  if (!format) {
    preview.hidden = true;
    return;
  }
  previewImage.src = URL.createObjectURL(file);
  try {
    await previewImage.decode();
  } catch {
    preview.hidden = true;
    imageFacts.textContent = `${file.name}: ${format}, ${size} (this browser cannot show it)`;
    return;
  }
  preview.hidden = false;
  image = { width: previewImage.naturalWidth, height: previewImage.naturalHeight };
  imageFacts.textContent = `${file.name}: ${format}, ${image.width} × ${image.height} pixels, ${size}`;
  showStepSizes();
  // The whole image to start from, unless a region was typed meanwhile.
  if (operationSelect.value === 'crop' && cropFields.width.value === '' && cropFields.height.value === '') setCropRegion({ x: 0, y: 0, width: image.width, height: image.height });
  drawCropBox();
}

function cropRegion() {
  const value = (field) => (field.value === '' ? NaN : Number(field.value));
  return { x: value(cropFields.x), y: value(cropFields.y), width: value(cropFields.width), height: value(cropFields.height) };
}

function setCropRegion(region) {
  for (const name of Object.keys(cropFields)) cropFields[name].value = String(region[name]);
}

/** The part of the image a cover resize keeps (in image pixels), as the server cuts it; null where the server looks (entropy, attention). */
function coverRegion(box) {
  const scale = Math.max(box.width / image.width, box.height / image.height);
  const kept = { width: Math.min(image.width, box.width / scale), height: Math.min(image.height, box.height / scale) };
  const position = positionSelect.value;
  const focal = /^([\d.]+),([\d.]+)$/.exec(position);
  const clamp = (value, max) => Math.min(max, Math.max(0, value));
  if (focal) {
    return { x: clamp(Number(focal[1]) * image.width - kept.width / 2, image.width - kept.width), y: clamp(Number(focal[2]) * image.height - kept.height / 2, image.height - kept.height), ...kept };
  }
  if (!(position in GRAVITY)) return null;
  const [sx, sy] = GRAVITY[position];
  return { x: sx * (image.width - kept.width), y: sy * (image.height - kept.height), ...kept };
}

/** What the box over the preview shows: the crop region, or the part of the picture a resize keeps and its box. */
function shownRegion() {
  if (!image) return null;
  if (operationSelect.value === 'crop') return cropRegion();
  if (operationSelect.value !== 'resize') return null;
  const box = { width: Number(resizeFields.width.value), height: Number(resizeFields.height.value) };
  const fit = fitSelect.value;
  fitHint.hidden = !(box.width > 0 && box.height > 0) || (fit !== 'cover' && fit !== 'contain');
  if (fitHint.hidden) return null;
  if (fit === 'contain') {
    fitHint.textContent = `All of the picture is kept and padded with the background to ${box.width} × ${box.height}.`;
    return { x: 0, y: 0, width: image.width, height: image.height };
  }
  const region = coverRegion(box);
  fitHint.textContent = region
    ? `The box shows the part kept, resized to ${box.width} × ${box.height}. Click the picture to keep the part around that point.`
    : `The server picks the part kept (${positionSelect.value}), resized to ${box.width} × ${box.height}.`;
  return region;
}

/** The box over the preview, in percent of the image, so it needs no redrawing when the page resizes. */
function drawCropBox() {
  const cropping = operationSelect.value === 'crop' && image !== null;
  preview.classList.toggle('cropping', cropping);
  preview.classList.toggle('pointing', operationSelect.value === 'resize' && fitSelect.value === 'cover' && image !== null);
  cropHint.hidden = !cropping;
  if (operationSelect.value !== 'resize') fitHint.hidden = true;
  const region = shownRegion();
  const valid = region !== null && Object.values(region).every(Number.isFinite) && region.width > 0 && region.height > 0;
  cropBox.hidden = !valid;
  if (!valid) return;
  cropBox.style.left = `${(region.x / image.width) * 100}%`;
  cropBox.style.top = `${(region.y / image.height) * 100}%`;
  cropBox.style.width = `${(Math.min(region.width, image.width - region.x) / image.width) * 100}%`;
  cropBox.style.height = `${(Math.min(region.height, image.height - region.y) / image.height) * 100}%`;
}

/** A focal point (fractions of the picture) as a choice of the position list. */
function choosePoint(point) {
  const value = `${(point.x / image.width).toFixed(3)},${(point.y / image.height).toFixed(3)}`;
  let option = positionSelect.querySelector('option[data-point]');
  if (!option) {
    option = document.createElement('option');
    option.dataset.point = '';
    positionSelect.append(option);
  }
  option.value = value;
  option.textContent = `Point ${value}`;
  positionSelect.value = value;
  drawCropBox();
}

/** A pointer position on the preview, in image pixels, kept inside the image. */
function imagePoint(event) {
  const box = previewImage.getBoundingClientRect();
  const clamp = (value, max) => Math.min(max, Math.max(0, Math.round(value)));
  return {
    x: clamp(((event.clientX - box.left) / box.width) * image.width, image.width),
    y: clamp(((event.clientY - box.top) / box.height) * image.height, image.height),
  };
}

let dragStart = null;
preview.addEventListener('pointerdown', (event) => {
  if (operationSelect.value === 'resize' && fitSelect.value === 'cover' && image) return choosePoint(imagePoint(event));
  if (operationSelect.value !== 'crop' || !image) return;
  event.preventDefault();
  preview.setPointerCapture(event.pointerId);
  dragStart = imagePoint(event);
});
preview.addEventListener('pointermove', (event) => {
  if (!dragStart) return;
  const point = imagePoint(event);
  const x = Math.min(dragStart.x, point.x);
  const y = Math.min(dragStart.y, point.y);
  setCropRegion({ x, y, width: Math.max(1, Math.abs(point.x - dragStart.x)), height: Math.max(1, Math.abs(point.y - dragStart.y)) });
  drawCropBox();
});
for (const type of ['pointerup', 'pointercancel']) preview.addEventListener(type, () => (dragStart = null));
for (const field of [...Object.values(cropFields), ...Object.values(resizeFields)]) field.addEventListener('input', drawCropBox);
fitSelect.addEventListener('change', showFitFields);
positionSelect.addEventListener('change', drawCropBox);

// ---------------------------------------------------------------------------
// Several steps: crop, resize, rotate and flip, sent together as one JSON field
// ---------------------------------------------------------------------------

const stepList = document.getElementById('steps');
const stepSizes = document.getElementById('steps-size');
const STEP_NAMES = { crop: 'Crop', resize: 'Resize', rotate: 'Rotate', flip: 'Flip' };

/** A step's fields as the API takes them: numbers for numbers, left out where empty. */
function stepOf(item) {
  const step = { op: item.dataset.op };
  for (const field of item.querySelectorAll('[data-field]')) {
    if (field.value === '') continue;
    const number = field.type === 'number' || field.dataset.field === 'angle';
    step[field.dataset.field] = number ? Number(field.value) : field.value;
  }
  return step;
}

const stepItems = () => [...stepList.querySelectorAll(':scope > li')];
const collectSteps = () => stepItems().map(stepOf);

/** The nearest pixel to side * target / reference, at least 1 (the server's exact ratio). */
const ratioSide = (side, target, reference) => Math.max(1, Math.round((side * target) / reference));

/** The picture's size after `step`, as the server works it out; null where the step's fields are incomplete. */
function sizeAfter(step, size) {
  switch (step.op) {
    case 'crop':
      return step.width > 0 && step.height > 0 ? { width: step.width, height: step.height } : null;
    case 'rotate':
      return step.angle === 180 ? size : { width: size.height, height: size.width };
    case 'flip':
      return size;
    case 'resize': {
      const { width, height } = step;
      if (!(width > 0) && !(height > 0)) return null;
      if (!(height > 0)) return { width, height: ratioSide(size.height, width, size.width) };
      if (!(width > 0)) return { width: ratioSide(size.width, height, size.height), height };
      if (step.fit !== 'inside' && step.fit !== 'outside') return { width, height };
      const widthLimits = step.fit === 'inside' ? size.width * height >= size.height * width : size.width * height <= size.height * width;
      return widthLimits ? { width, height: ratioSide(size.height, width, size.width) } : { width: ratioSide(size.width, height, size.height), height };
    }
  }
  return null;
}

/** Each step's number and the size the picture has after it; the result's size under the list. */
function showStepSizes() {
  let size = image && { width: image.width, height: image.height };
  const items = stepItems();
  items.forEach((item, index) => {
    const step = stepOf(item);
    size = size && sizeAfter(step, size);
    item.querySelector('.step-number').textContent = `${index + 1}. ${STEP_NAMES[step.op]}`;
    item.querySelector('.step-size').textContent = size ? `→ ${size.width} × ${size.height}` : '';
    item.querySelector('button.remove').setAttribute('aria-label', `Remove step ${index + 1} (${STEP_NAMES[step.op].toLowerCase()})`);
  });
  if (items.length === 0) stepSizes.textContent = 'No steps yet: add a crop, a resize, a rotation or a flip.';
  else stepSizes.textContent = size ? `The result will be ${size.width} × ${size.height} pixels.` : 'Fill in the steps to see the size of the result.';
}

/** A new step at the end of the list; a crop starts as the whole picture as it stands there. */
function addStep(op) {
  const item = document.getElementById(`step-${op}`).content.firstElementChild.cloneNode(true);
  const head = document.createElement('div');
  head.className = 'step-head';
  head.innerHTML = '<p class="step-title"><span class="step-number"></span> <span class="step-size hint"></span></p><button type="button" class="link remove">Remove</button>';
  item.querySelector('.step-title').replaceWith(head);
  if (op === 'crop' && image) {
    let size = { width: image.width, height: image.height };
    for (const step of collectSteps()) size = size && sizeAfter(step, size);
    if (size) {
      const field = (name) => item.querySelector(`[data-field="${name}"]`);
      field('x').value = '0';
      field('y').value = '0';
      field('width').value = String(size.width);
      field('height').value = String(size.height);
    }
  }
  stepList.append(item);
  showStepSizes();
  item.querySelector('input, select').focus();
}

for (const button of form.querySelectorAll('[data-add-step]')) button.addEventListener('click', () => addStep(button.dataset.addStep));
stepList.addEventListener('click', (event) => {
  const remove = event.target.closest('button.remove');
  if (!remove) return;
  remove.closest('li').remove();
  showStepSizes();
});
stepList.addEventListener('input', showStepSizes);
stepList.addEventListener('change', showStepSizes);

// ---------------------------------------------------------------------------
// Sending
// ---------------------------------------------------------------------------

function showResult(data) {
  const resultPreview = result.querySelector('img');
  resultPreview.src = data.download_url;
  resultPreview.width = data.width;
  resultPreview.height = data.height;
  const score = data.score
    ? ` Quality ${data.quality}, chosen by Auto: SSIMULACRA 2 score ${data.score.value} for a target of ${data.score.target}${data.score.measured_on === 'sample' ? ' (measured on a sample of the picture)' : ''}.`
    : '';
  result.querySelector('.result-facts').textContent =
    `${data.format.toUpperCase()}, ${data.width} × ${data.height} pixels, ${formatBytes(data.size)}.${score} The link works until ${new Date(data.expires_at).toUTCString()}.`;
  const link = result.querySelector('a');
  link.href = data.download_url;
  link.download = data.filename;
  link.textContent = `Download ${data.filename}`;
  result.hidden = false;
}

function showRemaining(left) {
  if (left === null || Number.isNaN(left)) return;
  remaining = left;
  const counter = document.getElementById('quota-remaining');
  if (counter) counter.textContent = String(left);
  if (quotaExhausted) quotaExhausted.hidden = left !== 0;
}

function uploadFields() {
  const fields = new FormData(form);
  const operation = fields.get('operation');
  fields.delete('operation');
  if (fields.get('quality_auto') === 'on') fields.set('quality', 'auto');
  fields.delete('quality_auto');
  for (const name of ['format', 'quality', 'quality_target', 'width', 'height', 'fit']) {
    if (fields.get(name) === '') fields.delete(name);
  }
  // With a fit, keep_aspect_ratio is left out (the API refuses a contradicting pair).
  if (operation === 'resize' && fitSelect.value === '') fields.set('keep_aspect_ratio', keepAspectRatio.checked ? 'true' : 'false');
  if (operation === 'transform') fields.set('steps', JSON.stringify(collectSteps()));
  return { operation, fields };
}

function send(operation, fields) {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open('POST', `/app/v1/${operation}`);
    request.setRequestHeader('X-CSRF-Token', csrfToken);
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) progressBar.value = Math.round((event.loaded / event.total) * 100);
    });
    // Uploaded: the server is working now, for an unknown time.
    request.upload.addEventListener('load', () => progressBar.removeAttribute('value'));
    request.addEventListener('load', () => {
      let body = null;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        // Not our JSON envelope (a proxy's error page, say): fall through to the generic message.
      }
      const header = request.getResponseHeader('X-RateLimit-Remaining');
      resolve({ status: request.status, body, remaining: header === null ? null : Number(header), requestId: request.getResponseHeader('X-Request-Id') });
    });
    request.addEventListener('error', () => resolve({ status: 0, body: null, remaining: null, requestId: null }));
    request.send(fields);
  });
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  errorBox.hidden = true;
  const file = fileInput.files[0];
  if (!file) return showError('Choose an image first.');
  if (file.size > maxBytes) return showError(tooLargeMessage());
  // Known before uploading: the API would refuse it the same way.
  if (remaining === 0) return showError(limitMessage);

  const { operation, fields } = uploadFields();
  if (operation === 'transform' && stepItems().length === 0) return showError('Add a step first: a crop, a resize, a rotation or a flip.');
  submitButton.disabled = true;
  progressBar.value = 0;
  progressText.textContent = OPERATIONS[operation].busy;
  progress.hidden = false;
  try {
    const { status, body, remaining: left, requestId } = await send(operation, fields);
    if (body && body.success) {
      showResult(body.data);
    } else if (body && body.error) {
      showError(status === 401 ? `${body.error.message} (Reload the page to log in.)` : body.error.message, body.error.request_id);
    } else {
      showError(status === 0 ? 'The connection failed. Check your network and try again.' : 'The server could not process the request. Try again in a moment.', requestId);
    }
    showRemaining(left);
  } finally {
    progress.hidden = true;
    submitButton.disabled = false;
  }
});

operationSelect.addEventListener('change', showOperationFields);
formatSelect.addEventListener('change', showQualityFields);
qualityAuto.addEventListener('change', showQualityFields);
fileInput.addEventListener('change', showChosenImage);
for (const type of ['dragenter', 'dragover']) {
  dropZone.addEventListener(type, (event) => {
    event.preventDefault();
    dropZone.classList.add('dragging');
  });
}
for (const type of ['dragleave', 'drop']) dropZone.addEventListener(type, () => dropZone.classList.remove('dragging'));
dropZone.addEventListener('drop', (event) => {
  event.preventDefault();
  if (event.dataTransfer.files.length > 0) {
    fileInput.files = event.dataTransfer.files;
    showChosenImage();
  }
});
showOperationFields();
if (fileInput.files.length > 0) showChosenImage();
