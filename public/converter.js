// The converter page: sends the form to the same operations as the API (/app/v1/<operation>,
// signed in by the session cookie plus the page's CSRF token) and shows the result or the
// API's own error message. No framework: the page works without a build step.
const form = document.getElementById('converter');
const fileInput = form.elements.file;
const operationSelect = form.elements.operation;
const formatSelect = form.elements.format;
const dropZone = document.getElementById('drop-zone');
const progress = document.getElementById('progress');
const progressBar = progress.querySelector('progress');
const errorBox = document.getElementById('error');
const result = document.getElementById('result');
const submitButton = form.querySelector('button[type="submit"]');
const csrfToken = document.querySelector('meta[name="csrf-token"]').content;
const maxBytes = Number(form.dataset.maxBytes);

function showOperationFields() {
  const operation = operationSelect.value;
  for (const fieldset of form.querySelectorAll('fieldset[data-operation]')) {
    const active = fieldset.dataset.operation === operation;
    fieldset.hidden = !active;
    // Disabled fields stay out of the upload: crop and resize both have width and height.
    fieldset.disabled = !active;
  }
  formatSelect.required = operation === 'convert';
  formatSelect.options[0].disabled = operation === 'convert';
  if (operation === 'convert' && formatSelect.value === '') formatSelect.value = 'webp';
}

function showError(message) {
  errorBox.textContent = message;
  errorBox.hidden = false;
}

function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function showResult(data) {
  const preview = result.querySelector('img');
  preview.src = data.download_url;
  preview.width = data.width;
  preview.height = data.height;
  result.querySelector('.result-facts').textContent =
    `${data.format.toUpperCase()}, ${data.width} × ${data.height} pixels, ${formatBytes(data.size)}. The link works until ${new Date(data.expires_at).toUTCString()}.`;
  const link = result.querySelector('a');
  link.href = data.download_url;
  link.download = data.filename;
  link.textContent = `Download ${data.filename}`;
  result.hidden = false;
}

function uploadFields() {
  const fields = new FormData(form);
  const operation = fields.get('operation');
  fields.delete('operation');
  for (const name of ['format', 'quality', 'width', 'height']) {
    if (fields.get(name) === '') fields.delete(name);
  }
  if (operation === 'resize') fields.set('keep_aspect_ratio', form.elements.keep_aspect_ratio.checked ? 'true' : 'false');
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
      resolve({ status: request.status, body, remaining: request.getResponseHeader('X-RateLimit-Remaining') });
    });
    request.addEventListener('error', () => resolve({ status: 0, body: null, remaining: null }));
    request.send(fields);
  });
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  errorBox.hidden = true;
  const file = fileInput.files[0];
  if (!file) return showError('Choose an image first.');
  if (file.size > maxBytes) return showError(`The file is larger than the ${maxBytes / 1024 / 1024} MB your plan allows.`);

  const { operation, fields } = uploadFields();
  submitButton.disabled = true;
  progressBar.value = 0;
  progress.hidden = false;
  try {
    const { status, body, remaining } = await send(operation, fields);
    if (body && body.success) {
      showResult(body.data);
    } else if (body && body.error) {
      showError(status === 401 ? `${body.error.message} (Reload the page to log in.)` : body.error.message);
    } else {
      showError(status === 0 ? 'The connection failed. Check your network and try again.' : 'The server could not process the request. Try again in a moment.');
    }
    const counter = document.getElementById('quota-remaining');
    if (counter && remaining !== null) counter.textContent = remaining;
  } finally {
    progress.hidden = true;
    submitButton.disabled = false;
  }
});

operationSelect.addEventListener('change', showOperationFields);
for (const type of ['dragenter', 'dragover']) {
  dropZone.addEventListener(type, (event) => {
    event.preventDefault();
    dropZone.classList.add('dragging');
  });
}
for (const type of ['dragleave', 'drop']) dropZone.addEventListener(type, () => dropZone.classList.remove('dragging'));
dropZone.addEventListener('drop', (event) => {
  event.preventDefault();
  if (event.dataTransfer.files.length > 0) fileInput.files = event.dataTransfer.files;
});
showOperationFields();
